package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"optimize/storage"
)

// evidenceStudy is one 40-trial slo-cascade study shared by the evidence
// tests (one worker: repeatable).
var evidenceStudy struct {
	once     sync.Once
	dir, dsn string
	err      string
}

func sharedStudy(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a 40-trial study")
	}
	evidenceStudy.once.Do(func() {
		dir, err := os.MkdirTemp("", "optimize-evidence-")
		evidenceStudy.dir = dir
		if err != nil {
			evidenceStudy.err = err.Error()
			return
		}
		evidenceStudy.dsn = filepath.Join(dir, "e.db")
		code, _, errs := run(t, "study", "create", "slo-cascade", "--trials", "40", "--name", "ev", "--storage", evidenceStudy.dsn, "--workers", "1")
		if code != 0 {
			evidenceStudy.err = errs
		}
	})
	if evidenceStudy.err != "" {
		t.Fatal(evidenceStudy.err)
	}
	return evidenceStudy.dsn
}

type objectiveJSON struct {
	InStudy  *float64   `json:"in_study_delta"`
	HeldOut  *float64   `json:"held_out_delta"`
	CI95     []*float64 `json:"ci95"`
	Better   int        `json:"better_on_seeds"`
	NumSeeds int        `json:"seeds"`
}

type candidateJSON struct {
	Trial      int                      `json:"trial"`
	Params     map[string]any           `json:"params"`
	Overfit    *bool                    `json:"overfit"`
	Verdict    string                   `json:"verdict"`
	Objectives map[string]objectiveJSON `json:"objectives"`
}

type validationJSON struct {
	Seeds      []int64         `json:"seeds"`
	Candidates []candidateJSON `json:"candidates"`
	Regimes    []struct {
		Name       string          `json:"name"`
		Candidates []candidateJSON `json:"candidates"`
	} `json:"regimes"`
}

// The held-out Δ of the best trial matches a recomputation by hand from
// `simulate` on the same seeds: the mean over seeds of candidate/baseline −
// 1, with a 95 % interval below 0; the JSON has the documented shape.
func TestValidateMatchesSimulateByHand(t *testing.T) {
	dsn := sharedStudy(t)
	code, out, errs := run(t, "study", "validate", "ev", "--storage", dsn, "--output", "json", "--regime", "rate-0.5x,near-capacity")
	if code != 0 {
		t.Fatalf("validate: %s", errs)
	}
	var v validationJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.Seeds, []int64{100, 101, 102, 103, 104, 105, 106, 107, 108, 109}) || len(v.Candidates) != 1 || len(v.Regimes) != 2 {
		t.Fatalf("seeds %v, %d candidates, %d regimes", v.Seeds, len(v.Candidates), len(v.Regimes))
	}
	c := v.Candidates[0]
	crit := c.Objectives["critical_ttft_p99"]
	if c.Overfit == nil || crit.InStudy == nil || crit.HeldOut == nil || len(crit.CI95) != 2 || crit.NumSeeds != 10 || len(c.Params) == 0 {
		t.Fatalf("candidate lacks documented fields: %s", out)
	}
	if hi := *crit.CI95[1]; !(hi < 0) || !(*crit.CI95[0] <= *crit.HeldOut && *crit.HeldOut <= hi) {
		t.Errorf("critical TTFT P99 held out %.4f, interval [%.4f, %.4f]: want it inside and below 0", *crit.HeldOut, *crit.CI95[0], hi)
	}

	// By hand: the trial's parameters through --param, and the baseline.
	args := []string{"simulate", "--template", "slo-cascade", "--seeds", "100,101,102,103,104,105,106,107,108,109", "--output", "json"}
	for name, val := range c.Params {
		args = append(args, "--param", fmt.Sprintf("%s=%v", name, val))
	}
	cand := perSeedCritical(t, args...)
	base := perSeedCritical(t, "simulate", "--template", "baseline", "--seeds", "100,101,102,103,104,105,106,107,108,109", "--output", "json")
	mean := 0.0
	for i := range cand {
		mean += (cand[i]/base[i] - 1) / float64(len(cand))
	}
	if d := math.Abs(mean - *crit.HeldOut); d > 0.005 {
		t.Errorf("held-out Δ %.4f, by hand %.4f: %.2f points apart (want ≤ 0.5)", *crit.HeldOut, mean, 100*d)
	}
	t.Logf("critical TTFT P99: in study %+.1f%%, held out %+.1f%% [%+.1f%%, %+.1f%%], by hand %+.1f%%",
		100**crit.InStudy, 100**crit.HeldOut, 100**crit.CI95[0], 100**crit.CI95[1], 100*mean)

	// show includes it, and export gives it as CSV.
	code, out, _ = run(t, "study", "show", "ev", "--storage", dsn)
	if code != 0 || !strings.Contains(out, "Held-out validation: seeds 100–109") || !strings.Contains(out, "near-capacity") {
		t.Errorf("show lacks the validation:\n%s", out)
	}
	code, out, _ = run(t, "study", "export", "ev", "--storage", dsn, "--validation", "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(rows) != 1+3*4 || rows[0][0] != "regime" {
		t.Errorf("export --validation: %d rows, %v", len(rows), err)
	}
}

func perSeedCritical(t *testing.T, args ...string) []float64 {
	t.Helper()
	code, out, errs := run(t, args...)
	if code != 0 {
		t.Fatalf("%v: %s", args, errs)
	}
	var doc struct {
		PerSeed []struct {
			PerSLO map[string]struct {
				TTFT struct{ P99 float64 } `json:"ttft_ms"`
			} `json:"per_slo"`
		} `json:"per_seed"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var out2 []float64
	for _, s := range doc.PerSeed {
		out2 = append(out2, s.PerSLO["critical"].TTFT.P99)
	}
	return out2
}

// Ablation: slo-cascade's best trial splits into at least three
// components; priority and scheduling carry most of the critical TTFT
// gain; and each leave-one-out run is `simulate --param … --set` with the
// component's settings.
func TestAblateComponentsAndReproduction(t *testing.T) {
	dsn := sharedStudy(t)
	code, out, errs := run(t, "study", "ablate", "ev", "--storage", dsn, "--output", "json")
	if code != 0 {
		t.Fatalf("ablate: %s", errs)
	}
	var a struct {
		Trial      int `json:"trial"`
		Components []struct {
			Name         string             `json:"name"`
			Settings     map[string]string  `json:"settings"`
			LeaveOneOut  map[string]float64 `json:"leave_one_out"`
			AddOne       map[string]float64 `json:"add_one"`
			Contribution map[string]float64 `json:"contribution"`
		} `json:"components"`
		Full        map[string]float64 `json:"full"`
		Interaction map[string]float64 `json:"interaction"`
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Components) < 3 {
		t.Fatalf("%d components, want ≥ 3: %s", len(a.Components), out)
	}
	byContribution := slices.Clone(a.Components)
	sort.Slice(byContribution, func(i, j int) bool {
		return byContribution[i].Contribution["critical_ttft_p99"] < byContribution[j].Contribution["critical_ttft_p99"]
	})
	top := []string{byContribution[0].Name, byContribution[1].Name}
	slices.Sort(top)
	if !slices.Equal(top, []string{"priority", "scheduler"}) {
		t.Errorf("largest critical TTFT contributions from %v, want priority and scheduler", top)
	}
	for _, c := range a.Components {
		want := a.Full["critical_ttft_p99"] - c.LeaveOneOut["critical_ttft_p99"]
		if math.Abs(c.Contribution["critical_ttft_p99"]-want) > 1e-12 || len(c.Settings) == 0 {
			t.Errorf("%s: contribution %v, want full − leave-one-out = %v; settings %v", c.Name, c.Contribution["critical_ttft_p99"], want, c.Settings)
		}
	}
	sum := 0.0
	for _, c := range a.Components {
		sum += c.AddOne["critical_ttft_p99"]
	}
	if math.Abs(a.Interaction["critical_ttft_p99"]-(a.Full["critical_ttft_p99"]-sum)) > 1e-12 {
		t.Errorf("interaction %v, want full − Σ add-one = %v", a.Interaction["critical_ttft_p99"], a.Full["critical_ttft_p99"]-sum)
	}

	// Leave-one-out by hand for the scheduler: the same Δ to the last digit.
	code, out, _ = run(t, "study", "show", "ev", "--storage", dsn, "--output", "json")
	var show struct {
		Baseline struct {
			PerSLO map[string]struct {
				TTFT struct{ P99 float64 } `json:"ttft_ms"`
			} `json:"per_slo"`
		} `json:"baseline"`
		Best struct {
			Trial  int            `json:"trial"`
			Params map[string]any `json:"params"`
		} `json:"best"`
	}
	if err := json.Unmarshal([]byte(out), &show); err != nil || show.Best.Trial != a.Trial {
		t.Fatalf("show: %v (best %d, ablated %d)", err, show.Best.Trial, a.Trial)
	}
	for _, c := range a.Components {
		if c.Name != "scheduler" && c.Name != "chunking" {
			continue
		}
		args := []string{"simulate", "--template", "slo-cascade", "--seeds", "42,43,44", "--output", "json"}
		for name, val := range show.Best.Params {
			args = append(args, "--param", fmt.Sprintf("%s=%v", name, val))
		}
		for k, v := range c.Settings {
			args = append(args, "--set", k+"="+v)
		}
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("%s by hand: %s", c.Name, errs)
		}
		var sim struct {
			Mean struct {
				PerSLO map[string]struct {
					TTFT struct{ P99 float64 } `json:"ttft_ms"`
				} `json:"per_slo"`
			} `json:"mean"`
		}
		if err := json.Unmarshal([]byte(out), &sim); err != nil {
			t.Fatal(err)
		}
		base := show.Baseline.PerSLO["critical"].TTFT.P99
		got := (sim.Mean.PerSLO["critical"].TTFT.P99 - base) / base
		if math.Abs(got-c.LeaveOneOut["critical_ttft_p99"]) > 1e-9 {
			t.Errorf("%s left out: ablation %.6f, simulate --set %v gives %.6f", c.Name, c.LeaveOneOut["critical_ttft_p99"], c.Settings, got)
		}
	}
}

// An interrupted validation (a real SIGINT) keeps what it finished, and
// the next run computes only the rest: the final report equals one made
// in a single go.
func TestValidateResumesAfterInterrupt(t *testing.T) {
	optimizeBin, _ := workerBinaries(t)
	dsn := sharedStudy(t)
	// A copy of the study without any validation, in a fresh file.
	fresh := filepath.Join(t.TempDir(), "f.db")
	if code, _, errs := run(t, "study", "create", "slo-cascade", "--trials", "40", "--name", "ev", "--storage", fresh, "--workers", "1"); code != 0 {
		t.Fatal(errs)
	}
	args := []string{"study", "validate", "ev", "--storage", fresh, "--regime", "near-capacity,sustained-overload", "--workers", "1", "--output", "json"}
	p := start(t, "validate", optimizeBin, nil, args...)
	st, err := storage.Open(fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		n := evidenceRuns(t, st, "ev")
		if n >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-p.done
	if hint := "run `" + optimizeBin + " study validate ev` again"; !strings.Contains(p.err.String(), hint) {
		t.Errorf("interrupted validate: stderr %q lacks the hint %q", p.err.String(), hint)
	}
	kept := evidenceRuns(t, st, "ev")
	if kept == 0 || kept >= 60 {
		t.Fatalf("%d runs kept after the interrupt; want some, not all 60 (stderr %s)", kept, p.err.String())
	}
	code, resumed, errs := run(t, args...)
	if code != 0 {
		t.Fatalf("resume: %s", errs)
	}
	if want := fmt.Sprintf("%d stored already", kept); !strings.Contains(errs, want) {
		t.Errorf("resume did not reuse the %d kept runs: %s", kept, errs)
	}
	total := evidenceRuns(t, st, "ev")
	if total != 60 {
		t.Errorf("%d runs stored, want exactly 60 (2 configurations × 3 workloads × 10 seeds), none twice", total)
	}
	args[4] = dsn
	_, whole, _ := run(t, args...)
	if resumed != whole {
		t.Errorf("resumed validation differs from one made in a single go")
	}
}

// evidenceRuns counts the study's stored evidence runs.
func evidenceRuns(t *testing.T, st *storage.Store, name string) int {
	t.Helper()
	row, err := st.StudyByName(name)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.EvidenceRuns(row.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}
