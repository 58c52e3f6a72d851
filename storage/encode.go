package storage

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
)

// encodeMetrics is a metrics column's JSON. encoding/json refuses NaN and
// ±Inf, and a summary can hold one (a class without requests has no
// percentile); such a value is written as null, so that a trial's result
// is stored rather than lost, and reads back as 0 in a float field.
func encodeMetrics(v any) (string, error) {
	js, err := json.Marshal(v)
	var unsupported *json.UnsupportedValueError
	if errors.As(err, &unsupported) {
		js, err = json.Marshal(finite(reflect.ValueOf(v)))
	}
	return string(js), err
}

// finite mirrors v as maps, slices and numbers for encoding/json, with
// nil in place of each NaN or ±Inf float, following json struct tags.
func finite(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return f
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return finite(v.Elem())
	case reflect.Struct:
		out := make(map[string]any, v.NumField())
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if strings.Contains(opts, "omitempty") && v.Field(i).IsZero() {
				continue
			}
			out[name] = finite(v.Field(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			out[it.Key().String()] = finite(it.Value())
		}
		return out
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = finite(v.Index(i))
		}
		return out
	}
	return v.Interface()
}
