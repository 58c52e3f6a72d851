package search

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Value is one parameter's value: Number for a numeric parameter, Choice
// (the choice's name) for a categorical one. An inactive parameter's value
// is Inactive(): Number NaN and Choice "". Only this package turns a
// choice into its index (what the samplers model and what a trial's stored
// params hold, see Encode) and back.
type Value struct {
	Number float64
	Choice string
}

// Inactive is the value of a parameter whose condition does not hold.
func Inactive() Value { return Value{Number: math.NaN()} }

// Absent reports whether v is Inactive().
func (v Value) Absent() bool { return v.Choice == "" && math.IsNaN(v.Number) }

// Any is v for JSON: the choice, the number, or nil when inactive.
func (v Value) Any() any {
	switch {
	case v.Choice != "":
		return v.Choice
	case math.IsNaN(v.Number):
		return nil
	}
	return v.Number
}

// Check is the range check: it reports a value outside the parameter's
// space, naming the parameter and what it allows. Inactive() is outside
// every space.
func (p Param) Check(v Value) error {
	if p.Kind == Categorical {
		if !slices.Contains(p.Choices, v.Choice) {
			return fmt.Errorf("%s: %q is not allowed (allowed: %s)", p.Name, v.Choice, strings.Join(p.Choices, ", "))
		}
		return nil
	}
	x := v.Number
	if math.IsNaN(x) || x < p.Low || x > p.High {
		return fmt.Errorf("%s: %s is out of range (allowed: %s)", p.Name, FormatNumber(x), p.AllowedText())
	}
	if p.Kind == Int && x != math.Trunc(x) {
		return fmt.Errorf("%s: %s is not a whole number (allowed: %s)", p.Name, FormatNumber(x), p.AllowedText())
	}
	return nil
}

// Parse reads a value as written in a template, a flag or --param: one of
// the choices, or a number in range.
func (p Param) Parse(text string) (Value, error) {
	text = strings.TrimSpace(text)
	if p.Kind == Categorical {
		v := Value{Choice: text}
		return v, p.Check(v)
	}
	x, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return Inactive(), fmt.Errorf("%s: %q is not a number (allowed: %s)", p.Name, text, p.AllowedText())
	}
	v := Value{Number: x}
	return v, p.Check(v)
}

// Format renders a value: the choice, a whole number, or a float; "" when
// inactive.
func (p Param) Format(v Value) string {
	switch {
	case v.Choice != "":
		return v.Choice
	case math.IsNaN(v.Number):
		return ""
	case p.Kind == Int:
		return strconv.FormatInt(int64(v.Number), 10)
	}
	return FormatNumber(v.Number)
}

// RangeText describes the space compactly: "[low, high]" or "{a, b, c}".
func (p Param) RangeText() string {
	if p.Kind == Categorical {
		return "{" + strings.Join(p.Choices, ", ") + "}"
	}
	return fmt.Sprintf("[%s, %s]", FormatNumber(p.Low), FormatNumber(p.High))
}

// AllowedText describes the space in words, e.g. "whole numbers in [0, 512]".
func (p Param) AllowedText() string {
	switch p.Kind {
	case Categorical:
		return "one of " + strings.Join(p.Choices, ", ")
	case Int:
		return fmt.Sprintf("whole numbers in [%s, %s]", FormatNumber(p.Low), FormatNumber(p.High))
	}
	return fmt.Sprintf("numbers in [%s, %s]", FormatNumber(p.Low), FormatNumber(p.High))
}

// GridText says where a study's samplers put a float parameter's values:
// on floatSteps+1 points evenly spaced over [Low, High] (log-spaced for
// log-float), e.g. "1,001-point grid, step 0.019"; "" for the other kinds.
// A value given from outside (--param, evaluate, study enqueue) is run
// as given, on the grid or not; TPE models it at its nearest point.
func (p Param) GridText() string {
	points := strconv.Itoa(floatSteps + 1)
	if len(points) > 3 {
		points = points[:len(points)-3] + "," + points[len(points)-3:]
	}
	switch p.Kind {
	case Float:
		return fmt.Sprintf("%s-point grid, step %s", points, FormatNumber(round12((p.High-p.Low)/floatSteps)))
	case LogFloat:
		return fmt.Sprintf("%s-point log grid, ratio %s a step", points, strconv.FormatFloat(math.Pow(p.High/p.Low, 1.0/floatSteps), 'g', 6, 64))
	}
	return ""
}

// FormatNumber prints whole numbers below 1e10 in full (2147483647, not
// 2.147483647e+09) and anything else in the shortest form.
func FormatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e10 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Encode is values as a trial's stored params hold them: a number per
// parameter, a categorical's choice by its index, NaN when inactive (or
// not a choice: Check first).
func (s Space) Encode(values []Value) []float64 {
	out := make([]float64, len(values))
	for i, v := range values {
		out[i] = v.Number
		if i < len(s) && s[i].Kind == Categorical {
			out[i] = math.NaN()
			if j := slices.Index(s[i].Choices, v.Choice); j >= 0 {
				out[i] = float64(j)
			}
		}
	}
	return out
}

// Decode reads a trial's stored params (as Encode writes them): NaN is
// inactive. A stored vector shorter than the space leaves the rest
// inactive and a longer one's surplus is dropped, so that a study whose
// template has since gained or lost a trailing parameter still loads.
func (s Space) Decode(stored []float64) ([]Value, error) {
	out := make([]Value, len(s))
	for i, p := range s {
		out[i] = Inactive()
		if i >= len(stored) || math.IsNaN(stored[i]) {
			continue
		}
		x := stored[i]
		if p.Kind != Categorical {
			out[i] = Value{Number: x}
			continue
		}
		if x != math.Trunc(x) || x < 0 || x >= float64(len(p.Choices)) {
			return nil, fmt.Errorf("%s: %s is not an index of the choices %s", p.Name, FormatNumber(x), p.RangeText())
		}
		out[i] = Value{Choice: p.Choices[int(x)]}
	}
	return out, nil
}

// values is the sampler's vector (categoricals by index, NaN inactive) as
// Values; an index outside the choices reads as inactive.
func (s Space) values(internal []float64) []Value {
	out := make([]Value, len(internal))
	for i, x := range internal {
		out[i] = Value{Number: x}
		if s[i].Kind == Categorical {
			out[i] = Inactive()
			if x >= 0 && x < float64(len(s[i].Choices)) {
				out[i] = Value{Choice: s[i].Choices[int(x)]}
			}
		}
	}
	return out
}
