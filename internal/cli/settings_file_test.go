package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"optimize/strategies"
	"optimize/studies/report"
)

// trialRuns is the per-seed metrics of `study show --trial N --output
// json`, compacted, with the trial's settings.
func trialRuns(t *testing.T, dsn, study string, n int) ([][]byte, map[string]string) {
	t.Helper()
	code, out, errs := run(t, "study", "show", study, "--trial", fmt.Sprint(n), "--output", "json", "--storage", dsn)
	if code != 0 {
		t.Fatalf("show --trial %d: %s", n, errs)
	}
	var d struct {
		Seeds []struct {
			Metrics json.RawMessage `json:"metrics"`
		} `json:"seeds"`
		Settings map[string]string `json:"settings"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	var runs [][]byte
	for _, s := range d.Seeds {
		runs = append(runs, compact(t, s.Metrics))
	}
	return runs, d.Settings
}

// simulateRuns is the per-seed summaries of `simulate ... --output json`
// on several seeds, compacted.
func simulateRuns(t *testing.T, args ...string) [][]byte {
	t.Helper()
	code, out, errs := run(t, append([]string{"simulate", "--output", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("simulate %v: exit %d: %s", args, code, errs)
	}
	var m struct {
		PerSeed []json.RawMessage `json:"per_seed"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	var runs [][]byte
	for _, r := range m.PerSeed {
		runs = append(runs, compact(t, r))
	}
	return runs
}

func compact(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The settings round trip: every complete trial's settings, exported and
// run by `simulate --settings` on the study's workload and seeds, give
// the trial's simulation byte for byte — on a template with conditional
// parameters (joint-slo), one that tunes the world (capacity: instances,
// GPU, TP) and one whose routing profile is not in key order (joint-kv
// appends token-load before session-affinity). `study show --trial N
// --settings` writes the same file, and the trial's JSON settings are its
// `key: value` lines. A file changed by one line runs another simulation.
func TestSettingsRoundTripReproducesTrials(t *testing.T) {
	if testing.Short() {
		t.Skip("runs studies")
	}
	reg, err := strategies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		template string
		trials   int
	}{{"joint-slo", 4}, {"capacity", 3}, {"joint-kv", 3}} {
		tpl, err := reg.Get(c.template)
		if err != nil {
			t.Fatal(err)
		}
		dsn := createTemplateStudy(t, c.template, "s", c.trials)
		for n := range c.trials {
			file := filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", c.template, n))
			if code, _, errs := run(t, "study", "export", "s", "--format", "settings", "--trial", fmt.Sprint(n), "-o", file, "--storage", dsn); code != 0 {
				t.Fatalf("%s trial %d: export: %s", c.template, n, errs)
			}
			exported, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, shown, _ := run(t, "study", "show", "s", "--trial", fmt.Sprint(n), "--settings", "--storage", dsn)
			if shown != string(exported) {
				t.Errorf("%s trial %d: show --settings differs from export --format settings", c.template, n)
			}
			want, settings := trialRuns(t, dsn, "s", n)
			got := simulateRuns(t, "--settings", file, "--workload", tpl.Workload, "--seeds", "42,43,44")
			if len(got) != len(want) || len(want) != 3 {
				t.Fatalf("%s trial %d: %d runs, want %d", c.template, n, len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("%s trial %d, seed %d: simulate --settings differs from the trial:\n%s\nwant\n%s", c.template, n, 42+i, got[i], want[i])
				}
			}
			lines := 0
			for _, line := range strings.Split(string(exported), "\n") {
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				key, value, _ := strings.Cut(line, ": ")
				if settings[key] != strings.Trim(value, `"`) {
					t.Errorf("%s trial %d: the JSON's settings[%s] is %q, the file's %q", c.template, n, key, settings[key], value)
				}
				lines++
			}
			if lines != len(settings) || lines < 30 {
				t.Errorf("%s trial %d: %d lines in the file, %d settings in the JSON; want the same, at least 30", c.template, n, lines, len(settings))
			}
		}
		// One line changed, another simulation: the file is what runs.
		file := filepath.Join(dir, c.template+"-0.yaml")
		data, _ := os.ReadFile(file)
		changed := strings.Replace(string(data), "\nbatch.max_num_running_reqs: ", "\nbatch.max_num_running_reqs: 3\n# was: ", 1)
		if changed == string(data) {
			t.Fatalf("%s: no batch.max_num_running_reqs line in\n%s", c.template, data)
		}
		if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
			t.Fatal(err)
		}
		want, _ := trialRuns(t, dsn, "s", 0)
		if got := simulateRuns(t, "--settings", file, "--workload", tpl.Workload, "--seeds", "42,43,44"); bytes.Equal(got[0], want[0]) {
			t.Errorf("%s: 3 running requests per instance simulate as the trial's", c.template)
		}
	}
}

// `study show --output json` gives the best trial's settings; the
// settings export defaults to the best trial; and the flags that do not
// combine say so in one line.
func TestSettingsOfTheBestTrialAndMisuse(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study")
	}
	dsn := createTemplateStudy(t, "slo-cascade", "b", 3)
	_, out, _ := run(t, "study", "show", "b", "--output", "json", "--storage", dsn)
	var doc struct {
		Best struct {
			Trial    int               `json:"trial"`
			Settings map[string]string `json:"settings"`
		} `json:"best"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Best.Settings["scheduler"] == "" || doc.Best.Settings["num_instances"] != "8" || len(doc.Best.Settings) < 30 {
		t.Errorf("best.settings lacks the scheduler or 8 instances, or has under 30 settings: %v", doc.Best.Settings)
	}
	_, best, _ := run(t, "study", "export", "b", "--format", "settings", "--storage", dsn)
	_, trial, _ := run(t, "study", "show", "b", "--trial", fmt.Sprint(doc.Best.Trial), "--settings", "--storage", dsn)
	if best != trial || !strings.HasPrefix(best, fmt.Sprintf("# The settings trial %d of study b", doc.Best.Trial)) {
		t.Errorf("the settings export without --trial is not the best trial's (%d):\n%s", doc.Best.Trial, best)
	}
	file := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(file, []byte(best), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"study", "export", "b", "--format", "csv", "--trial", "1"}, "--trial: only with --format settings"},
		{[]string{"study", "export", "b", "--format", "settings", "--pareto"}, "--format settings: one trial's settings"},
		{[]string{"study", "export", "b", "--format", "yaml"}, `--format: unknown value "yaml" (allowed: ` + strings.Join(report.ExportFormats, ", ") + ")"},
		{[]string{"study", "export", "b", "--format", "settings", "--trial", "99"}, "--trial: study b has no complete trial 99"},
		{[]string{"study", "show", "b", "--settings", "--output", "json"}, "--settings: writes YAML alone"},
		{[]string{"simulate", "--settings", file, "--template", "slo-cascade"}, "--settings: give a template (--template) or a settings file, not both"},
		{[]string{"simulate", "--settings", filepath.Join(t.TempDir(), "none.yaml")}, "--settings: open "},
	} {
		code, _, errs := run(t, append(c.args, "--storage", dsn)[:len(c.args)+2*boolInt(c.args[0] == "study")]...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line with %q", c.args, code, errs, c.want)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
