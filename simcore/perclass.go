package simcore

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// PerClass holds one number per SLO class, and which classes were given,
// parsed from flags like "critical=10,standard=5,sheddable=1".
type PerClass struct {
	V   [NumSLOClasses]float64
	Set [NumSLOClasses]bool
}

// Get returns the class's value and whether it was given.
func (p *PerClass) Get(c SLOClass) (float64, bool) { return p.V[c], p.Set[c] }

// Or returns the class's value, or def when it was not given.
func (p *PerClass) Or(c SLOClass, def float64) float64 {
	if p.Set[c] {
		return p.V[c]
	}
	return def
}

// Resolve returns every class's value: the given ones, and defaults for
// the others.
func (p *PerClass) Resolve(defaults [NumSLOClasses]float64) [NumSLOClasses]float64 {
	for c := range defaults {
		if p.Set[c] {
			defaults[c] = p.V[c]
		}
	}
	return defaults
}

// Given reports whether any class was given.
func (p *PerClass) Given() bool {
	for _, s := range p.Set {
		if s {
			return true
		}
	}
	return false
}

// String renders the given classes in class order ("critical=10,...").
func (p PerClass) String() string {
	var parts []string
	for c := SLOClass(1); c < NumSLOClasses; c++ {
		if p.Set[c] {
			parts = append(parts, fmt.Sprintf("%s=%g", c, p.V[c]))
		}
	}
	return strings.Join(parts, ",")
}

// ParsePerClass parses "class=value,..." with finite values. With ms set,
// values are ms or Go durations (100ms, 1.5s; see parseNumber), returned in ms.
// Errors name the offending pair and the allowed classes; an empty string
// gives an empty PerClass.
func ParsePerClass(s string, ms bool) (PerClass, error) {
	var p PerClass
	if strings.TrimSpace(s) == "" {
		return p, nil
	}
	for _, pair := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			return p, fmt.Errorf("%q is not class=value", pair)
		}
		c, err := ParseSLOClass(name)
		if err != nil || c == SLONone {
			return p, fmt.Errorf("unknown SLO class %q (allowed: %s)", name, SLOClassNames)
		}
		if p.Set[c] {
			return p, fmt.Errorf("class %s given twice", c)
		}
		v, err := parseNumber(strings.TrimSpace(val), ms)
		if err != nil {
			return p, fmt.Errorf("%s=%s: %v", name, val, err)
		}
		p.V[c], p.Set[c] = v, true
	}
	return p, nil
}

// parseNumber reads a finite number. With ms set, a bare number is in ms
// and a number with a unit is a Go duration as BLIS f90a1e3a reads its
// --slo-ttft/--slo-itl/--slo-e2e ("100ms", "1.5s", "2500us", "1m30s").
func parseNumber(s string, ms bool) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && ms {
		d, derr := time.ParseDuration(s)
		if derr != nil {
			return 0, fmt.Errorf("not a number of ms nor a duration such as 100ms, 1.5s or 2500us")
		}
		return float64(d) / float64(time.Millisecond), nil
	}
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("not a finite number")
	}
	return v, nil
}
