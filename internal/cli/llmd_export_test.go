package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"optimize/strategies"
	"optimize/studies/report"
)

// llmdRoundTrips are the templates whose trials the test runs again from
// their exported files, and the verdict their MAPPING.md must give:
// round-robin's profile maps back to round-robin routing exactly, but
// its CPU KV tier (kept from the baseline: the template is about routing
// under KV pressure) is only approximated, since vLLM's offloading has no
// utilisation threshold; llm-d-default is llm-d's profile on vLLM without
// offloading, and exports exactly.
var llmdRoundTrips = []struct{ template, verdict string }{
	{"round-robin", "2 settings block exactness: kv.cpu_blocks, kv.offload_threshold."},
	{"llm-d-default", report.MappingSummary(nil)},
}

// exportLLMD exports trial n of the study into a new directory and
// returns it, with MAPPING.md's text.
func exportLLMD(t *testing.T, dsn, study string, n int) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "deploy")
	if code, _, errs := run(t, "study", "export", study, "--format", "llm-d", "--trial", fmt.Sprint(n), "-o", dir, "--storage", dsn); code != 0 {
		t.Fatalf("export --format llm-d: exit %d: %s", code, errs)
	}
	mapping, err := os.ReadFile(filepath.Join(dir, report.MappingFile))
	if err != nil {
		t.Fatal(err)
	}
	return dir, string(mapping)
}

// reproduceArgs reads MAPPING.md's simulate command, with the files it
// names in dir.
func reproduceArgs(t *testing.T, dir, mapping string) []string {
	t.Helper()
	_, after, ok := strings.Cut(mapping, "```\noptimize simulate ")
	if !ok {
		t.Fatalf("MAPPING.md has no simulate command:\n%s", mapping)
	}
	line, _, _ := strings.Cut(after, "\n")
	args := strings.Fields(line)
	for i, a := range args {
		if a == report.EPPConfigFile || a == report.VLLMArgsFile || a == report.VLLMArgsPrefillFile || a == report.VLLMArgsDecodeFile {
			args[i] = filepath.Join(dir, a)
		}
	}
	return args
}

// The export → import round trip: a trial's exported EndpointPickerConfig
// and vLLM arguments, run by simulate with MAPPING.md's command (the
// files, and --set for what they do not carry exactly), give the trial's
// simulation byte for byte; and the exact templates' MAPPING.md says so
// with no --set but the world's.
func TestLLMDExportRoundTripReproducesTrials(t *testing.T) {
	if testing.Short() {
		t.Skip("runs studies")
	}
	reg, err := strategies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, rt := range llmdRoundTrips {
		name := rt.template
		if _, err := reg.Get(name); err != nil {
			t.Errorf("%s: not a built-in template", name)
			continue
		}
		ran++
		dsn := createTemplateStudy(t, name, "s", 2)
		for n := range 2 {
			dir, mapping := exportLLMD(t, dsn, "s", n)
			want, _ := trialRuns(t, dsn, "s", n)
			got := simulateRuns(t, reproduceArgs(t, dir, mapping)...)
			if len(got) != len(want) || len(want) != 3 {
				t.Fatalf("%s trial %d: %d runs, want %d", name, n, len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("%s trial %d, seed %d: the exported configs simulate differently:\n%s\nwant\n%s\nMAPPING.md:\n%s", name, n, 42+i, got[i], want[i], mapping)
				}
			}
			if !strings.Contains(mapping, "\n"+rt.verdict+"\n") || strings.Contains(mapping, "up to the float rounding") {
				t.Errorf("%s trial %d: want the verdict %q and the trial reproduced exactly:\n%s", name, n, rt.verdict, mapping)
			}
			if _, err := os.Stat(filepath.Join(dir, report.ObjectivesFile)); err == nil {
				t.Errorf("%s (no class priority) wrote %s", name, report.ObjectivesFile)
			}
			if name == "round-robin" && !strings.Contains(mapping, "| `routing.policy` | round-robin | llm-d profile of `no-hit-lru-scorer` alone | exact") {
				t.Errorf("round-robin trial %d: routing.policy not exported as the no-hit-lru-scorer profile:\n%s", n, mapping)
			}
			if name == "llm-d-default" && (!strings.Contains(mapping, "| `routing.picker` | max-score-picker | llm-d picker `max-score-picker` | exact") ||
				!strings.Contains(mapping, "llm-d `queue-scorer`, weight ")) {
				t.Errorf("llm-d-default trial %d: the picker or queue-scorer not exported exactly:\n%s", n, mapping)
			}
		}
	}
	if ran == 0 {
		t.Fatal("no round-trip template is built in")
	}
}

// A study of a demo-like template (slo-cascade: the weighted profile of
// BLIS scorers, tiered priority, per-class chunking) exports a MAPPING.md
// with a row classifying every setting the trial ran with — the settings
// export's key: value lines, an independent list — and a verdict naming
// the ones that block exactness. (The demo study has 40 trials; four
// here keep the test short.)
func TestLLMDMappingClassifiesEverySetting(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study")
	}
	dsn := createTemplateStudy(t, "slo-cascade", "demo", 4)
	dir, mapping := exportLLMD(t, dsn, "demo", 3)
	_, settings, _ := run(t, "study", "export", "demo", "--format", "settings", "--trial", "3", "--storage", dsn)
	summary := ""
	for _, line := range strings.Split(mapping, "\n") {
		if strings.Contains(line, "block exactness") || strings.HasPrefix(line, "Exported exactly") {
			summary = line
		}
	}
	keys := 0
	for _, line := range strings.Split(settings, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, _, _ := strings.Cut(line, ":")
		keys++
		row := ""
		for _, l := range strings.Split(mapping, "\n") {
			if strings.HasPrefix(l, "| `"+key+"` |") {
				row = l
			}
			// A scorer at weight 0 is on the line of those, exact.
			if strings.HasPrefix(l, "Scorers at weight 0 (exact") && strings.Contains(l, "`"+key+"`") {
				row = "| `" + key + "` | 0 | — | exact |"
			}
		}
		cells := strings.Split(row, " | ")
		if len(cells) != 4 {
			t.Errorf("MAPPING.md has no row for %s", key)
			continue
		}
		how, _, _ := strings.Cut(cells[3], ":")
		switch strings.TrimSuffix(how, " |") {
		case "exact", "world":
		case "approximated", "no counterpart":
			if !strings.Contains(summary, " "+key+",") && !strings.Contains(summary, " "+key+".") {
				t.Errorf("%s is %s but the verdict does not name it: %s", key, how, summary)
			}
		default:
			t.Errorf("%s: classified %q", key, how)
		}
	}
	if keys < 40 || !strings.Contains(summary, "scheduler") || !strings.Contains(summary, "priority.policy") {
		t.Errorf("%d settings; verdict %q: want at least 40, and the priority scheduler and slo-tiered priority blocking", keys, summary)
	}
	for _, f := range []string{report.EPPConfigFile, report.VLLMArgsFile, report.ObjectivesFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("slo-cascade (class priority) export: %v", err)
		}
	}
}
