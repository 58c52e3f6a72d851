package cli

import (
	"slices"
	"testing"

	"optimize/simcore/metrics"
)

// Every line of simulate's text summary reads a number the summary has (writeRow
// would stop the program otherwise).
func TestSummaryRowsReadSummaryNumbers(t *testing.T) {
	has := func(names []string, n string) bool { return slices.Contains(names, n) }
	var run, class []string
	for _, n := range metrics.SummaryNumbers() {
		run = append(run, n.Name)
	}
	for _, n := range metrics.ClassNumbers() {
		class = append(class, n.Name)
	}
	for _, r := range runRows {
		if !has(run, r.number) {
			t.Errorf("report row %q reads %q, not a summary number", r.label, r.number)
		}
	}
	for _, r := range classRows {
		if !has(class, r.number) {
			t.Errorf("report row %q reads %q, not a class number", r.label, r.number)
		}
	}
}
