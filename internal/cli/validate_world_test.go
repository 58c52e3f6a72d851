package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type worldValidationJSON struct {
	Kind       string          `json:"kind"`
	Candidates []candidateJSON `json:"candidates"`
	Worlds     []struct {
		Given string `json:"given"`
		World struct {
			Model        string `json:"model"`
			GPU          string `json:"gpu"`
			TP           int    `json:"tp"`
			LatencyModel string `json:"latency_model"`
		} `json:"world"`
		Line       string          `json:"line"`
		Regime     string          `json:"regime"`
		StudyWorld bool            `json:"study_world"`
		Candidates []candidateJSON `json:"candidates"`
	} `json:"worlds"`
}

// worldStudy makes a small slo-cascade study (8 trials, one worker).
func worldStudy(t *testing.T, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a study")
	}
	dsn := filepath.Join(t.TempDir(), "w.db")
	code, _, errs := run(t, append(args, "study", "create", "slo-cascade", "--trials", "8", "--name", "w", "--storage", dsn, "--workers", "1")...)
	if code != 0 {
		t.Fatalf("create: %s", errs)
	}
	return dsn
}

// validateWorlds runs validate with args and decodes its JSON.
func validateWorlds(t *testing.T, args ...string) worldValidationJSON {
	t.Helper()
	code, out, errs := run(t, append(args, "--output", "json")...)
	if code != 0 {
		t.Fatalf("validate: %s", errs)
	}
	var v worldValidationJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Validating under trained-physics re-runs the trial and the baseline
// there: the world is recorded, and the held-out Δ is the one `simulate
// --latency-model trained-physics` gives with the trial's parameters and
// the baseline on the same seeds — not the study world's, which differs
// by more than 10 points. show, export and the stored list say it.
func TestValidateInAnotherWorldMatchesSimulate(t *testing.T) {
	dsn := worldStudy(t)
	seeds := "100,101,102,103,104"
	v := validateWorlds(t, "study", "validate", "w", "--storage", dsn, "--seeds", seeds, "--world", "trained-physics")
	if v.Kind != "worlds" || len(v.Candidates) != 0 || len(v.Worlds) != 1 || len(v.Worlds[0].Candidates) != 1 {
		t.Fatalf("kind %q, %d candidates, %d worlds: want worlds, 0, 1 with one candidate", v.Kind, len(v.Candidates), len(v.Worlds))
	}
	w := v.Worlds[0]
	if w.Given != "latency.model=trained-physics" || w.World.LatencyModel != "trained-physics" || w.StudyWorld ||
		w.World.Model != "meta-llama/llama-3.1-8b-instruct" || w.World.GPU != "H100" || w.World.TP != 2 {
		t.Fatalf("world recorded %+v", w)
	}
	c := w.Candidates[0]
	heldOut := *c.Objectives["critical_ttft_p99"].HeldOut

	args := []string{"simulate", "--template", "slo-cascade", "--latency-model", "trained-physics", "--seeds", seeds, "--output", "json"}
	for name, val := range c.Params {
		args = append(args, "--param", fmt.Sprintf("%s=%v", name, val))
	}
	cand := perSeedCritical(t, args...)
	base := perSeedCritical(t, "simulate", "--template", "baseline", "--latency-model", "trained-physics", "--seeds", seeds, "--output", "json")
	mean := 0.0
	for i := range cand {
		mean += (cand[i]/base[i] - 1) / float64(len(cand))
	}
	if d := math.Abs(mean - heldOut); d > 1e-9 {
		t.Errorf("held-out Δ under trained-physics %.6f, by hand with simulate %.6f", heldOut, mean)
	}
	plain := validateWorlds(t, "study", "validate", "w", "--storage", dsn, "--seeds", seeds)
	own := *plain.Candidates[0].Objectives["critical_ttft_p99"].HeldOut
	if math.Abs(own-heldOut) < 0.10 {
		t.Errorf("critical TTFT P99 held out %+.1f%% in the study's world, %+.1f%% under trained-physics: want ≥ 10 points apart (the world changed)", 100*own, 100*heldOut)
	}
	t.Logf("critical TTFT P99 held out: %+.1f%% blackbox, %+.1f%% trained-physics (by hand %+.1f%%)", 100*own, 100*heldOut, 100*mean)

	// The plain request ran later, but show keeps the latest of each kind.
	code, out, errs := run(t, "study", "show", "w", "--storage", dsn)
	if code != 0 {
		t.Fatal(errs)
	}
	for _, want := range []string{"latest `study validate --world`", "In another world: meta-llama/llama-3.1-8b-instruct on H100, TP2, trained-physics latency model (latency.model=trained-physics",
		"validate --world  trial", "worlds latency.model=trained-physics"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = run(t, "study", "show", "w", "--storage", dsn, "--output", "json")
	if code != 0 {
		t.Fatal(errs)
	}
	var show struct {
		Validations []worldValidationJSON `json:"validations"`
	}
	if err := json.Unmarshal([]byte(out), &show); err != nil || len(show.Validations) != 2 || show.Validations[1].Kind != "worlds" ||
		show.Validations[1].Worlds[0].World.LatencyModel != "trained-physics" {
		t.Fatalf("show JSON: %v, validations %+v", err, show.Validations)
	}
}

// With several worlds, one is the study's own: it is graded as the plain
// validation is, and its figures are the plain validation's; the export
// names each world in its own column.
func TestValidateInTheStudysWorldIsThePlainValidation(t *testing.T) {
	dsn := worldStudy(t)
	seeds := "100,101,102"
	v := validateWorlds(t, "study", "validate", "w", "--storage", dsn, "--seeds", seeds, "--world", "blackbox,trained-physics")
	if len(v.Worlds) != 2 || !v.Worlds[0].StudyWorld || v.Worlds[1].StudyWorld {
		t.Fatalf("worlds %+v: want blackbox (the study's) then trained-physics", v.Worlds)
	}
	plain := validateWorlds(t, "study", "validate", "w", "--storage", dsn, "--seeds", seeds)
	a, b := plain.Candidates[0].Objectives["critical_ttft_p99"], v.Worlds[0].Candidates[0].Objectives["critical_ttft_p99"]
	if *a.HeldOut != *b.HeldOut || a.Better != b.Better {
		t.Errorf("in the study's world %v (%d better), plain %v (%d better): want equal", *b.HeldOut, b.Better, *a.HeldOut, a.Better)
	}
	// The worlds request ran before the plain one: export gives the latest.
	if code, _, errs := run(t, "study", "validate", "w", "--storage", dsn, "--seeds", seeds, "--world", "blackbox,trained-physics"); code != 0 {
		t.Fatal(errs)
	}
	out := filepath.Join(t.TempDir(), "v.csv")
	if code, _, errs := run(t, "study", "export", "w", "--storage", dsn, "--validation", "-o", out); code != 0 {
		t.Fatal(errs)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	last := len(rows[0]) - 1
	worlds := map[string]int{}
	for _, r := range rows[1:] {
		worlds[r[last]]++
	}
	if rows[0][last] != "world" || worlds["latency.model=blackbox"] != 4 || worlds["latency.model=trained-physics"] != 4 {
		t.Errorf("export header %v, rows per world %v: want a world column, 4 objectives in each world", rows[0], worlds)
	}
}

// A study in a world other than the default (a template that sets
// trained-physics) validates back to blackbox: the world block names
// blackbox and is not the study's.
func TestValidateATrainedPhysicsStudyUnderBlackbox(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study")
	}
	dir := t.TempDir()
	tpl := `name: cascade-physics
description: The priority cascade's critical base, in the trained-physics world.
base: baseline
mechanism:
  scheduler: priority-fcfs
  priority.policy: slo-tiered
  latency.model: trained-physics
parameters:
  - {name: critical_base, type: float, low: 1, high: 20, default: 10, knob: priority.base.critical}
objectives:
  - {name: critical_ttft_p99, metric: per_slo.critical.ttft_ms.p99, direction: minimize}
`
	if err := os.WriteFile(filepath.Join(dir, "cascade-physics.yaml"), []byte(tpl), 0o644); err != nil {
		t.Fatal(err)
	}
	dsn := filepath.Join(t.TempDir(), "p.db")
	if code, _, errs := run(t, "--templates-dir", dir, "study", "create", "cascade-physics", "--trials", "4", "--name", "p", "--storage", dsn, "--workers", "1"); code != 0 {
		t.Fatal(errs)
	}
	v := validateWorlds(t, "--templates-dir", dir, "study", "validate", "p", "--storage", dsn, "--seeds", "100,101,102", "--world", "blackbox")
	if len(v.Worlds) != 1 || v.Worlds[0].World.LatencyModel != "blackbox" || v.Worlds[0].StudyWorld || len(v.Worlds[0].Candidates) != 1 ||
		v.Worlds[0].Candidates[0].Objectives["critical_ttft_p99"].NumSeeds != 3 {
		t.Fatalf("worlds %+v: want one, blackbox, not the study's, 3 seeds compared", v.Worlds)
	}
	code, out, _ := run(t, "--templates-dir", dir, "study", "show", "p", "--storage", dsn)
	if code != 0 || !strings.Contains(out, "world meta-llama/llama-3.1-8b-instruct on H100, TP2, trained-physics latency model") ||
		!strings.Contains(out, "In another world: meta-llama/llama-3.1-8b-instruct on H100, TP2, blackbox latency model") {
		t.Errorf("show: want the study's trained-physics world and the blackbox block:\n%s", out)
	}
}

// Bad world values are the one-line errors the same flags give `simulate`
// (--world's, of a latency model, are --latency-model's), and are refused
// before anything runs.
func TestValidateWorldErrorsAreTheWorldFlagsErrors(t *testing.T) {
	dsn := worldStudy(t)
	for _, c := range []struct {
		validate, simulate []string
	}{
		{[]string{"--world", "foo"}, []string{"--latency-model", "foo"}},
		{[]string{"--latency-model", "foo"}, []string{"--latency-model", "foo"}},
		{[]string{"--model", "nope"}, []string{"--model", "nope"}},
		{[]string{"--hardware", "X1"}, []string{"--hardware", "X1"}},
		{[]string{"--tp", "3"}, []string{"--tp", "3"}},
		{[]string{"--model", "meta-llama/llama-3.1-70b-instruct", "--tp", "1"}, []string{"--model", "meta-llama/llama-3.1-70b-instruct", "--tp", "1"}},
		{[]string{"--model", "meta-llama/llama-3.1-70b-instruct", "--tp", "4", "--latency-model", "blackbox"}, []string{"--model", "meta-llama/llama-3.1-70b-instruct", "--tp", "4", "--latency-model", "blackbox"}},
	} {
		code, _, want := run(t, append([]string{"simulate"}, c.simulate...)...)
		if code == 0 || !strings.Contains(want, c.simulate[len(c.simulate)-2]+": ") {
			t.Fatalf("simulate %v: exit %d, %q: want an error naming its last flag", c.simulate, code, want)
		}
		if c.validate[0] == "--world" {
			// --world takes world files too, and says so after simulate's words.
			want = strings.Replace(strings.TrimSuffix(want, "\n"), "--latency-model", "--world", 1) + ", nor is it a world file or a built-in world (built in: qwen3-14b-h100-vllm0.23)\n"
		}
		code, _, got := run(t, append([]string{"study", "validate", "w", "--storage", dsn}, c.validate...)...)
		if code == 0 || got != want || strings.Count(strings.TrimSpace(got), "\n") != 0 {
			t.Errorf("validate %v: exit %d, %q; want simulate's one line %q", c.validate, code, got, want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--world", "trained-physics", "--latency-model", "roofline"}, "--world and --latency-model are exclusive"},
		{[]string{"--world", "trained-physics", "--regime", "calm"}, `--regime: unknown regime "calm"`},
		{[]string{"--world", "trained-physics,trained-physics"}, "--world: world latency.model=trained-physics is given twice"},
	} {
		code, _, got := run(t, append([]string{"study", "validate", "w", "--storage", dsn}, c.args...)...)
		if code == 0 || !strings.Contains(got, c.want) || strings.Count(strings.TrimSpace(got), "\n") != 0 {
			t.Errorf("validate %v: exit %d, %q; want one line with %q", c.args, code, got, c.want)
		}
	}
	// Nothing ran: the study has no evidence.
	if code, out, _ := run(t, "study", "show", "w", "--storage", dsn); code != 0 || strings.Contains(out, "Evidence runs") {
		t.Errorf("show after refused validations lists evidence runs:\n%s", out)
	}
}

// With --regime as well, each world gets a block at the study's operating
// point and one per regime, graded as at a regime; the stored request
// comes back the same from show, and the CSV export names each block's
// regime and world.
func TestValidateInAnotherWorldAtARegime(t *testing.T) {
	dsn := worldStudy(t)
	v := validateWorlds(t, "study", "validate", "w", "--storage", dsn, "--seeds", "100,101,102", "--world", "trained-physics", "--regime", "load-0.9")
	if v.Kind != "worlds" || len(v.Worlds) != 2 || v.Worlds[0].Regime != "" || v.Worlds[1].Regime != "load-0.9" {
		t.Fatalf("kind %q, worlds %+v: want the operating point then load-0.9, both in trained-physics", v.Kind, v.Worlds)
	}
	for _, w := range v.Worlds {
		if w.World.LatencyModel != "trained-physics" || w.StudyWorld || len(w.Candidates) != 1 || w.Candidates[0].Verdict == "" {
			t.Errorf("block %+v: want trained-physics, another world, one graded candidate", w)
		}
	}
	if c := v.Worlds[1].Candidates[0]; c.Verdict == "overfit" {
		t.Errorf("at a regime nothing was fitted, but the verdict is overfit: %+v", c)
	}
	code, out, errs := run(t, "study", "show", "w", "--storage", dsn)
	if code != 0 || !strings.Contains(out, "In another world at regime load-0.9: meta-llama/llama-3.1-8b-instruct on H100, TP2, trained-physics latency model") {
		t.Errorf("show lacks the load-0.9 block (%s):\n%s", errs, out)
	}
	code, out, errs = run(t, "study", "export", "w", "--storage", dsn, "--validation", "--format", "csv")
	if code != 0 || !strings.Contains(out, "\nload-0.9,") || !strings.Contains(out, ",latency.model=trained-physics\n") {
		t.Errorf("export (%s) lacks a load-0.9 row in trained-physics:\n%s", errs, out)
	}
}
