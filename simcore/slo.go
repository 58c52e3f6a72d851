package simcore

import (
	"fmt"
	"strings"
)

// SLOClass is a request's service tier. The zero value is "no class".
type SLOClass uint8

// SLO classes in the order BLIS names them.
const (
	SLONone SLOClass = iota
	SLOCritical
	SLOStandard
	SLOSheddable
	SLOBatch
	SLOBackground
	NumSLOClasses // number of classes, SLONone included
)

var sloNames = [NumSLOClasses]string{"", "critical", "standard", "sheddable", "batch", "background"}

// String returns the class name as written in workload files ("" for none).
func (c SLOClass) String() string {
	if c < NumSLOClasses {
		return sloNames[c]
	}
	return fmt.Sprintf("slo(%d)", uint8(c))
}

// Known is c, or SLONone when c is out of range, so that indexing a
// per-class table with it never goes out of bounds.
func (c SLOClass) Known() SLOClass {
	if c >= NumSLOClasses {
		return SLONone
	}
	return c
}

// Label is String with "default" for the unnamed class, for reports.
func (c SLOClass) Label() string {
	if c == SLONone {
		return "default"
	}
	return c.String()
}

// SLOClassNames lists the accepted class names for error messages, in
// class order (from sloNames: a class is named once).
var SLOClassNames = strings.Join(sloNames[1:], ", ")

// ParseSLOClass accepts a class name ("" = none). The v1 tier names
// realtime and interactive map to critical and standard, as in BLIS.
func ParseSLOClass(s string) (SLOClass, error) {
	switch strings.TrimSpace(s) {
	case "":
		return SLONone, nil
	case "critical", "realtime":
		return SLOCritical, nil
	case "standard", "interactive":
		return SLOStandard, nil
	case "sheddable":
		return SLOSheddable, nil
	case "batch":
		return SLOBatch, nil
	case "background":
		return SLOBackground, nil
	}
	return SLONone, fmt.Errorf("unknown SLO class %q (allowed: %s)", s, SLOClassNames)
}
