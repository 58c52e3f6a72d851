// The JSON columns' encodings: flat float arrays (params, objectives,
// violations; null for NaN) and seed ranges.

package storage

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

var unbracket = strings.NewReplacer("[", "", "]", "")

// decodeRanges reads the seed_ranges column ([[min,max],...], one pair per
// objective); nil when it is empty or does not fit.
func decodeRanges(js string, objectives int) [][2]float64 {
	js = strings.TrimSpace(js)
	if len(js) < 2 || js[0] != '[' || js[len(js)-1] != ']' {
		return nil
	}
	flat, err := DecodeFloats("[" + unbracket.Replace(js[1:len(js)-1]) + "]")
	if err != nil || len(flat) != 2*objectives {
		return nil
	}
	out := make([][2]float64, objectives)
	for i := range out {
		out[i] = [2]float64{flat[2*i], flat[2*i+1]}
	}
	return out
}

// EncodeParams is the params column's JSON: a number per parameter, null
// for an inactive one (NaN in memory; JSON has no NaN).
func EncodeParams(values []float64) string { return EncodeFloats(values) }

// EncodeFloats is a flat JSON array of numbers — the params, objectives
// and violations columns — with null for NaN and ±Inf (JSON has neither;
// a value that is not a number reads back as NaN, missing, rather than
// losing the whole row).
func EncodeFloats(values []float64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range values {
		if i > 0 {
			b.WriteByte(',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b.WriteString("null")
			continue
		}
		js, _ := json.Marshal(v) // finite: cannot fail; encoding/json's spelling of numbers
		b.Write(js)
	}
	b.WriteByte(']')
	return b.String()
}

// DecodeParams reads the params column: null is NaN (inactive).
func DecodeParams(js []byte) ([]float64, error) { return DecodeFloats(string(js)) }

// DecodeFloats reads a flat JSON array of numbers and nulls (null is NaN)
// — the params, objectives and seed-range columns — without the
// reflection of encoding/json, which was a quarter of loading a
// 10,000-trial study.
func DecodeFloats(js string) ([]float64, error) {
	s := strings.TrimSpace(js)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, fmt.Errorf("not a JSON array: %.40q", js)
	}
	s = strings.TrimSpace(s[1 : len(s)-1])
	if s == "" {
		return []float64{}, nil
	}
	out := make([]float64, 0, strings.Count(s, ",")+1)
	for field := range strings.SplitSeq(s, ",") {
		field = strings.TrimSpace(field)
		if field == "null" {
			out = append(out, math.NaN())
			continue
		}
		v, err := strconv.ParseFloat(field, 64)
		if err != nil {
			return nil, fmt.Errorf("not a number in a JSON array: %.40q", field)
		}
		out = append(out, v)
	}
	return out, nil
}

// encodeRanges is the seed_ranges column's JSON; a NaN bound is null.
func encodeRanges(ranges [][2]float64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, r := range ranges {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(EncodeFloats(r[:]))
	}
	b.WriteByte(']')
	return b.String()
}
