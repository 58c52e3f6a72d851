package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

type rateBoundJSON struct {
	Rate    *float64 `json:"rate"`
	FailsAt *float64 `json:"fails_at"`
}

// `study validate --max-rate` on a small study prints the sentence and a
// row per seed; `show` (text and JSON) gives the stored search, whose
// rates meet the targets below where they fail; bad flags are one line.
func TestValidateMaxRate(t *testing.T) {
	dsn := createStudy(t, "4")
	args := []string{"study", "validate", "t1", "--max-rate", "--seeds", "100,101", "--tolerance", "0.1", "--storage", dsn, "--workers", "2"}
	code, out, errs := run(t, args...)
	if code != 0 {
		t.Fatalf("validate --max-rate: exit %d: %s", code, errs)
	}
	for _, want := range []string{"Maximum sustainable rate", "sustains", "sessions/s at per_slo.critical.ttft_attainment ≥ 0.99 and per_slo.standard.ttft_attainment ≥ 0.95", "95% CI", "\n       100 ", "\n       101 "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, show, errs := run(t, "study", "show", "t1", "--storage", dsn)
	if code != 0 || !strings.Contains(show, "latest `study validate --max-rate`") || !strings.Contains(show, "validate --max-rate  trial ") {
		t.Errorf("show: exit %d (%s), want the stored search and its request listed:\n%s", code, errs, show)
	}
	code, js, errs := run(t, "study", "show", "t1", "--storage", dsn, "--output", "json")
	if code != 0 {
		t.Fatalf("show json: exit %d: %s", code, errs)
	}
	var doc struct {
		MaxRate *struct {
			Winner, Baseline float64
			Tolerance        float64 `json:"tolerance"`
			PerSeed          []struct {
				Seed     int64         `json:"seed"`
				Winner   rateBoundJSON `json:"winner"`
				Baseline rateBoundJSON `json:"baseline"`
			} `json:"per_seed"`
		} `json:"max_rate"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.MaxRate
	if m == nil || len(m.PerSeed) != 2 || m.Tolerance != 0.1 || !(m.Winner > 0) || !(m.Baseline > 0) {
		t.Fatalf("show json max_rate: %+v, want 2 seeds with positive means", m)
	}
	for _, s := range m.PerSeed {
		for _, b := range []rateBoundJSON{s.Winner, s.Baseline} {
			if b.Rate == nil || b.FailsAt == nil || !(*b.Rate > 0 && *b.FailsAt > *b.Rate && *b.FailsAt <= 1.1**b.Rate) {
				t.Errorf("seed %d: rate %v fails at %v, want 0 < rate < fails ≤ 1.1 × rate", s.Seed, b.Rate, b.FailsAt)
			}
		}
	}

	for _, bad := range [][]string{
		{"--attainment", "critical=1.5"},
		{"--attainment", "vip=0.9"},
		{"--attainment", "per_slo.critical.ttft_ms.p99=0.9"},
		{"--tolerance", "0"},
		{"--regimes"},
	} {
		code, _, errs := run(t, append([]string{"study", "validate", "t1", "--max-rate", "--storage", dsn}, bad...)...)
		if code == 0 || strings.Count(strings.TrimSpace(errs), "\n") > 0 || !strings.Contains(errs, bad[0]) {
			t.Errorf("%v: exit %d, want one line naming %s:\n%s", bad, code, bad[0], errs)
		}
	}
}
