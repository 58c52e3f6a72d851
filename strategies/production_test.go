package strategies

import (
	"strings"
	"testing"
)

// Every setting but the scorer weights (whose rows carry their own) says
// what it is in production, and every row of the column names a setting.
func TestProductionColumnCoversTheTable(t *testing.T) {
	for _, s := range Settings() {
		if strings.HasPrefix(s.Key, WeightPrefix) {
			continue
		}
		if !described(s.Production) {
			t.Errorf("%s: no production counterpart described", s.Key)
		}
		if s.Production.Fidelity == NoCounterpart && s.Production.Values == nil && s.Production.Note == "" {
			t.Errorf("%s: no counterpart and no note of what would have to be built", s.Key)
		}
	}
	for _, row := range productionColumn() {
		found := false
		for _, s := range Settings() {
			if s.Key == row.key || (strings.HasSuffix(row.key, ".") && strings.HasPrefix(s.Key, row.key)) {
				found = true
			}
		}
		if !found {
			t.Errorf("production column row %q names no setting", row.key)
		}
	}
}

// A CPU tier of 3000 blocks of 16 tokens of llama-3.1-8b (32 layers, 8 KV
// heads of 128, 2 bytes: 131072 bytes per token over the TP2 instance) is 3000·16·131072/2^30 =
// 5.859375 GiB, and the GiB read back give the 3000 blocks.
func TestCPUTierConvertsToGiBAndBack(t *testing.T) {
	c, err := Standard()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := LookupSetting("kv.cpu_blocks")
	if err := s.Set(&c, "3000"); err != nil {
		t.Fatal(err)
	}
	got := s.Carry(&c)
	if got.Production != "5.859375" || got.Fidelity != Approximate {
		t.Fatalf("carried %+v", got)
	}
	back, ok := s.importValue(&c, got.Production)
	if !ok || back != "3000" {
		t.Fatalf("%s GiB read back as %q blocks, want 3000", got.Production, back)
	}
}
