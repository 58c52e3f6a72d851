package settings

import (
	"strings"
	"testing"
)

// Every setting but the scorer weights (whose rows carry their own) says
// what it is in production, and every row of the column names a setting.
func TestProductionColumnCoversTheTable(t *testing.T) {
	for _, s := range All() {
		if strings.HasPrefix(s.Key, WeightPrefix) {
			continue
		}
		if !s.Production.Described() {
			t.Errorf("%s: no production counterpart described", s.Key)
		}
		if s.Production.Fidelity == NoCounterpart && s.Production.Values == nil && s.Production.Note == "" {
			t.Errorf("%s: no counterpart and no note of what would have to be built", s.Key)
		}
	}
	for _, row := range productionColumn() {
		found := false
		for _, s := range All() {
			if s.Key == row.key || (strings.HasSuffix(row.key, ".") && strings.HasPrefix(s.Key, row.key)) {
				found = true
			}
		}
		if !found {
			t.Errorf("production column row %q names no setting", row.key)
		}
	}
}
