package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"optimize/storage"
	"optimize/strategies/settings"
	"optimize/studies/report"
)

// exportDeployed exports the study's best trial as llm-d files into a
// new directory and returns it, the command's output and MAPPING.md.
func exportDeployed(t *testing.T, dsn, study string) (dir, out, mapping string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "deploy")
	code, out, errs := run(t, "study", "export", study, "--format", "llm-d", "-o", dir, "--storage", dsn)
	if code != 0 {
		t.Fatalf("export --format llm-d: exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(filepath.Join(dir, report.MappingFile))
	if err != nil {
		t.Fatal(err)
	}
	return dir, out, string(data)
}

// deployedRow is one objective's line of the export's output.
type deployedRow struct {
	trial, deployed           string
	trialDelta, deployedDelta float64
}

// deployedRows reads the export's table: objective, unit, baseline,
// trial, Δ, as deployed, Δ.
func deployedRows(t *testing.T, out string) map[string]deployedRow {
	t.Helper()
	rows := map[string]deployedRow{}
	pct := func(s string) float64 {
		v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		if err != nil {
			t.Fatalf("Δ %q: %v\n%s", s, err, out)
		}
		return v
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 7 && strings.HasSuffix(f[4], "%") && strings.HasSuffix(f[6], "%") {
			rows[f[0]] = deployedRow{trial: f[3], deployed: f[5], trialDelta: pct(f[4]), deployedDelta: pct(f[6])}
		}
	}
	if len(rows) == 0 {
		t.Fatalf("no objective rows in the export's output:\n%s", out)
	}
	return rows
}

// deployedCommand reads MAPPING.md's command that runs what production
// gets, with the files it names in dir and the seeds replaced.
func deployedCommand(t *testing.T, dir, mapping, seeds string) []string {
	t.Helper()
	_, section, _ := strings.Cut(mapping, "\n## Run what production gets\n")
	_, after, ok := strings.Cut(section, "```\noptimize simulate ")
	if !ok {
		t.Fatalf("MAPPING.md has no command for what production gets:\n%s", mapping)
	}
	line, _, _ := strings.Cut(after, "\n")
	args := strings.Fields(line)
	for i, a := range args {
		switch {
		case a == report.EPPConfigFile || a == report.VLLMArgsFile || a == report.ObjectivesFile:
			args[i] = filepath.Join(dir, a)
		case a == "--set" && !isWorldKey(args[i+1]):
			t.Errorf("MAPPING.md's deployable command sets %s, which is not the world's", args[i+1])
		case i > 0 && args[i-1] == "--seeds":
			args[i] = seeds
		}
	}
	return args
}

// isWorldKey reports whether KEY=VALUE sets a setting of the world.
func isWorldKey(kv string) bool {
	key, _, _ := strings.Cut(kv, "=")
	s, ok := settings.Lookup(key)
	return ok && (s.Component == settings.CompCluster || s.Production.Fidelity == settings.WorldFact)
}

// meanCriticalTTFT is the mean over seeds of critical TTFT P99 (the
// objective critical_ttft_p99) of `simulate ARGS --output json`.
func meanCriticalTTFT(t *testing.T, args ...string) float64 {
	t.Helper()
	code, out, errs := run(t, append([]string{"simulate", "--output", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("simulate %v: exit %d: %s", args, code, errs)
	}
	var m struct {
		Mean struct {
			PerSLO map[string]struct {
				TTFT struct {
					P99 float64 `json:"p99"`
				} `json:"ttft_ms"`
			} `json:"per_slo"`
		} `json:"mean"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	return m.Mean.PerSLO["critical"].TTFT.P99
}

// The export says what production gets: kv-pressure-slo's winner routes
// by this project's kv-pressure-slo scorer, which no llm-d plugin
// computes, so the files alone — run as simulate imports them, in the
// study's world — route otherwise and do worse than the baseline
// (measured: critical TTFT P99 7,791 ms against 7,406, the trial's 7,355),
// and the export prints both Δs, warns, and writes the same near the top
// of MAPPING.md; the figure is what MAPPING.md's command for it simulates.
func TestLLMDExportSaysWhatProductionGets(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study")
	}
	dsn := createTemplateStudy(t, "kv-pressure-slo", "kps", 6)
	dir, out, mapping := exportDeployed(t, dsn, "kps")
	row := deployedRows(t, out)["critical_ttft_p99"]
	if row.deployedDelta <= 0 || row.trialDelta >= row.deployedDelta {
		t.Fatalf("critical_ttft_p99: trial %+.1f%%, as deployed %+.1f%%; want production worse than the baseline and than the trial:\n%s", row.trialDelta, row.deployedDelta, out)
	}
	warning := "WARNING: as exported, production would be worse than the baseline on critical_ttft_p99: " + row.deployed + " ms"
	for what, text := range map[string]string{"output": out, report.MappingFile: mapping} {
		if !strings.Contains(text, warning) {
			t.Errorf("the %s does not warn %q:\n%s", what, warning, text)
		}
	}
	section, summary := strings.Index(mapping, "## What production gets"), strings.Index(mapping, "settings block exactness")
	if section < 0 || summary < 0 || section > summary || !strings.Contains(mapping, "| critical_ttft_p99 | ") {
		t.Errorf("MAPPING.md: the section on what production gets is not before the verdict:\n%s", mapping)
	}
	got := meanCriticalTTFT(t, deployedCommand(t, dir, mapping, "42,43,44")...)
	if report.Human(got) != row.deployed {
		t.Errorf("MAPPING.md's command simulates critical TTFT P99 %s ms; the export said %s", report.Human(got), row.deployed)
	}
}

// A deployable study (slo-cascade --deployable, 12 trials) searches only
// what production carries — the class base priorities, which
// objectives.yaml and flow control's bands carry — and its winner is what
// production gets: its exported files alone, with the world's settings
// and no other --set, reproduce its runs byte for byte on the study's
// seeds (the export's two Δs are equal, with no warning), and on held-out
// seeds 45–47 it still beats the baseline on critical TTFT P99 (measured:
// 163 ms against 294, −44 %; on the study's seeds 172 against 303,
// −43 %).
func TestDeployableStudyKeepsItsGain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study")
	}
	dsn := filepath.Join(t.TempDir(), "d.db")
	if code, _, errs := run(t, "study", "create", "slo-cascade", "--deployable", "--trials", "12", "--name", "d", "--storage", dsn, "--workers", "1"); code != 0 {
		t.Fatal(errs)
	}
	dir, out, mapping := exportDeployed(t, dsn, "d")
	rows := deployedRows(t, out)
	for name, row := range rows {
		if row.trial != row.deployed || row.trialDelta != row.deployedDelta {
			t.Errorf("%s: trial %s (%+.1f%%), as deployed %s (%+.1f%%): want the same", name, row.trial, row.trialDelta, row.deployed, row.deployedDelta)
		}
	}
	if prim := rows["critical_ttft_p99"]; prim.trialDelta > -20 {
		t.Errorf("critical_ttft_p99 %+.1f%%: want the deployable study 20%% or more better than the baseline", prim.trialDelta)
	}
	if strings.Contains(out, "WARNING") || strings.Contains(mapping, "WARNING") {
		t.Errorf("a deployable winner's export warns:\n%s", out)
	}
	var best struct {
		Best struct{ Trial int } `json:"best"`
	}
	_, show, _ := run(t, "study", "show", "d", "--output", "json", "--storage", dsn)
	if err := json.Unmarshal([]byte(show), &best); err != nil {
		t.Fatal(err)
	}
	want, _ := trialRuns(t, dsn, "d", best.Best.Trial)
	got := simulateRuns(t, deployedCommand(t, dir, mapping, "42,43,44")...)
	if len(got) != 3 || len(want) != 3 {
		t.Fatalf("%d runs from the files, %d of the trial; want 3", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("seed %d: the files alone simulate otherwise than trial %d ran:\n%s\nwant\n%s", 42+i, best.Best.Trial, got[i], want[i])
		}
	}
	held := meanCriticalTTFT(t, deployedCommand(t, dir, mapping, "45,46,47")...)
	base := meanCriticalTTFT(t, "--template", "baseline", "--workload", "orthogonal-slo", "--seeds", "45,46,47")
	if held > 0.8*base {
		t.Errorf("held-out seeds 45-47: critical TTFT P99 %.1f ms as deployed, baseline %.1f ms: want 20%% or more better", held, base)
	}
	t.Logf("critical TTFT P99: study seeds %s (%+.1f%%); held-out %.1f ms against the baseline's %.1f (%+.1f%%)",
		rows["critical_ttft_p99"].deployed, rows["critical_ttft_p99"].deployedDelta, held, base, 100*(held/base-1))
	checkDeployableSpace(t, dsn)
}

// checkDeployableSpace: study d (slo-cascade --deployable) searched no
// parameter of a setting without a production counterpart — its stored
// trials have the restricted space's parameters, the export's columns
// none of the others — and every trial ran with each such setting at the
// standard configuration's value; study show says what it is.
func checkDeployableSpace(t *testing.T, dsn string) {
	t.Helper()
	_, csv, _ := run(t, "study", "export", "d", "--format", "csv", "--storage", dsn)
	header, _, _ := strings.Cut(csv, "\n")
	for _, gone := range []string{"age_weight_per_ms", "sheddable_urgency_ms", "critical_blend", "critical_prefill_chunk"} {
		if strings.Contains(header, gone) {
			t.Errorf("the trials have parameter %s, whose setting production lacks: %s", gone, header)
		}
	}
	for _, kept := range []string{"critical_base", "standard_base"} {
		if !strings.Contains(header, kept) {
			t.Errorf("the trials lack parameter %s, which production carries: %s", kept, header)
		}
	}
	st, err := storage.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	row, err := st.StudyByName("d")
	if err != nil || !row.Deployable {
		t.Fatalf("study d stored deployable %v (%v)", row != nil && row.Deployable, err)
	}
	trials, err := st.Trials(row.ID)
	if err != nil {
		t.Fatal(err)
	}
	std, err := settings.Standard()
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		if len(tr.Params) != 2 {
			t.Fatalf("trial %d stored %d parameters; want the 2 of slo-cascade's 6 that production carries", tr.Number, len(tr.Params))
		}
		_, set := trialRuns(t, dsn, "d", tr.Number)
		for key, value := range set {
			s, _ := settings.Lookup(key)
			// A class's prefill cap equal to the one for every request is
			// that one's (production.Carry: carried via it).
			via := s.Production.Inherits != "" && set[s.Production.Inherits] == value
			if !s.Carries(value) && !via && value != s.Value(&std) {
				t.Errorf("trial %d ran with %s=%s, which production lacks (standard: %s)", tr.Number, key, value, s.Value(&std))
			}
		}
	}
	if _, text, _ := run(t, "study", "show", "d", "--storage", dsn); !strings.Contains(text, report.DeployableLine) {
		t.Errorf("study show does not say the study is deployable:\n%s", text)
	}
}

// A study that could search nothing production carries is refused, in
// one line naming the flag and why, whether asked by flag or by a
// template's deployable: true (which names the file and field); so is a
// warm start across the two spaces, and --if-absent against a study made
// the other way.
func TestDeployableRefusals(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "r.db")
	code, _, errs := run(t, "study", "create", "kv-pressure-slo", "--deployable", "--trials", "2", "--storage", dsn)
	want := "optimize: --deployable: template kv-pressure-slo has nothing left to search that production carries: kv_pressure_slo_weight, batch_transfer_factor, transfer_scale_us (no llm-d or vLLM counterpart)\n"
	if code != 2 || errs != want {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, want)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "cascade-prod.yaml")
	if err := os.WriteFile(file, []byte("name: cascade-prod\ndescription: kv-pressure-slo, deployable.\nbase: kv-pressure-slo\nbase_parameters: search\ndeployable: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ := run(t, "template", "list", "--templates-dir", dir)
	if want := file + ": deployable: template cascade-prod has nothing left to search that production carries: kv_pressure_slo_weight, "; !strings.Contains(out, want) {
		t.Errorf("a deployable: true template with nothing production carries: want %q in\n%s", want, out)
	}
	// A template's deployable: true makes its studies deployable.
	if err := os.WriteFile(file, []byte("name: cascade-prod\ndescription: joint-slo, deployable.\nbase: joint-slo\nbase_parameters: search\ndeployable: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, "study", "create", "cascade-prod", "--templates-dir", dir, "--trials", "1", "--name", "by-template", "--storage", dsn, "--workers", "1"); code != 0 {
		t.Fatal(errs)
	}
	if _, text, _ := run(t, "study", "show", "by-template", "--templates-dir", dir, "--storage", dsn); !strings.Contains(text, report.DeployableLine) {
		t.Errorf("a study of a deployable: true template is not deployable:\n%s", text)
	}
	if code, _, errs := run(t, "study", "create", "joint-slo", "--trials", "1", "--name", "whole", "--storage", dsn, "--workers", "1"); code != 0 {
		t.Fatal(errs)
	}
	code, _, errs = run(t, "study", "create", "joint-slo", "--deployable", "--trials", "1", "--name", "warm", "--from", "whole", "--storage", dsn)
	if want := "optimize: --from: study whole is not deployable (the template's whole space) and this one deployable (only what production carries) (--deployable): a warm start needs the same parameters\n"; code != 2 || errs != want {
		t.Errorf("warm start across the spaces: exit %d, %q; want 2 and %q", code, errs, want)
	}
	code, _, errs = run(t, "study", "create", "joint-slo", "--deployable", "--trials", "1", "--name", "whole", "--if-absent", "--storage", dsn)
	if code != 2 || !strings.Contains(errs, fmt.Sprintf("study %q exists with --deployable false, not true", "whole")) {
		t.Errorf("--if-absent against a study made without --deployable: exit %d, %q", code, errs)
	}
}
