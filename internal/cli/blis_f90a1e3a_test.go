package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// One instance in BLIS f90a1e3a's world: five models (two MoE) on H100,
// A100-80 and L40S, plus two worlds short of KV that preempt often, each at
// 0.9 × its saturated throughput, seeds 42–44. The trained-physics latency
// model and the f90a1e3a era's mechanics reproduce BLIS's figures exactly
// (testdata/blis_f90a1e3a/one_instance.tsv says how BLIS ran them): KV
// blocks, preemptions, mean and P99 TTFT and E2E, tokens/s.
func TestBLISf90a1e3aOneInstance(t *testing.T) {
	dir := t.TempDir()
	rows := blisTable(t, "testdata/blis_f90a1e3a/one_instance.tsv")
	for i, want := range rows {
		spec := filepath.Join(dir, fmt.Sprintf("spec-%d.yaml", i))
		if err := os.WriteFile(spec, []byte(fmt.Sprintf(`version: "2"
seed: 42
aggregate_rate: %s
num_requests: 1000
clients:
  - id: chat
    rate_fraction: 1.0
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 1024, std_dev: 384, min: 64, max: 4096}}
    output_distribution: {type: gaussian, params: {mean: 256, std_dev: 128, min: 16, max: 1024}}
`, want["rate"])), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"simulate", "--workload-spec", spec, "--seed", want["seed"], "--model", want["model"], "--hardware", want["gpu"],
			"--tp", want["tp"], "--latency-model", "trained-physics", "--num-instances", "1", "--kv-capacity-rule", "blis-f90a1e3a", "--output", "json"}
		name := fmt.Sprintf("%s %s TP%s seed %s", want["model"], want["gpu"], want["tp"], want["seed"])
		checkBLISFigures(t, name, args, want)
		code, text, _ := run(t, append(args[:len(args)-2], "--num-requests", "1")...)
		if code != 0 || !strings.Contains(text, " "+want["kv_blocks"]+" KV blocks per instance") {
			t.Errorf("%s: want %s KV blocks per instance (BLIS's auto-calculated figure) in %q", name, want["kv_blocks"], strings.SplitN(text, "\n", 3)[:2])
		}
	}
	if len(rows) < 5*3*3 {
		t.Fatalf("%d runs; want ≥ 5 models × 3 GPUs × 3 seeds", len(rows))
	}
}

// Four instances in BLIS f90a1e3a's world under least-loaded routing, 40
// req/s of ~4,096-token prompts on H100 TP1, seeds 42–44: BLIS's command
// line, its defaults unwritten, reproduces its figures exactly
// (testdata/blis_f90a1e3a/least_loaded.tsv says how BLIS ran them). The
// routing signals are then 50 ms stale, f90a1e3a's default; read fresh
// (the 7fd7a88d default, given as --snapshot-refresh-interval 0 here) the
// TTFT P99 is 4–14 % lower. A refresh interval given and a run short of KV
// that preempts match too.
func TestBLISf90a1e3aLeastLoaded(t *testing.T) {
	rows := blisTable(t, "testdata/blis_f90a1e3a/least_loaded.tsv")
	plain := 0
	for _, want := range rows {
		args := []string{"simulate", "run", "--model", "meta-llama/llama-3.1-8b-instruct", "--hardware", "H100", "--tp", "1",
			"--latency-model", "trained-physics", "--num-instances", "4", "--routing-policy", "least-loaded",
			"--workload-spec", filepath.Join("testdata/blis_f90a1e3a", want["spec"]), "--seed", want["seed"]}
		for _, k := range []string{"flags", "ours_flags"} {
			if want[k] != "-" {
				args = append(args, strings.Fields(want[k])...)
			}
		}
		if want["flags"] == "-" && want["ours_flags"] == "-" {
			plain++
		}
		checkBLISFigures(t, strings.Join(args[2:], " "), append(args, "--output", "json"), want)
	}
	if plain < 3 {
		t.Fatalf("%d runs of BLIS's plain command line; want seeds 42–44", plain)
	}
}

// blisTable reads a tab-separated table of BLIS runs: '#' lines are
// comments, the first other line names the columns.
func blisTable(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var head []string
	var rows []map[string]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if head == nil {
			head = fields
			continue
		}
		if len(fields) != len(head) {
			t.Fatalf("%s: %d fields in %q, want %d", path, len(fields), line, len(head))
		}
		row := map[string]string{}
		for i, h := range head {
			row[h] = fields[i]
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// checkBLISFigures runs simulate with args (--output json) and compares
// its figures with BLIS's in want, to floating-point rounding.
func checkBLISFigures(t *testing.T, name string, args []string, want map[string]string) {
	t.Helper()
	code, out, errs := run(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for k, path := range map[string][]string{"ttft_mean_ms": {"ttft_ms", "mean"}, "ttft_p99_ms": {"ttft_ms", "p99"},
		"e2e_mean_ms": {"e2e_ms", "mean"}, "e2e_p99_ms": {"e2e_ms", "p99"}, "tokens_per_sec": {"tokens_per_sec"},
		"preemptions": {"preemptions"}, "completed": {"completed"}} {
		w, err := strconv.ParseFloat(want[k], 64)
		if err != nil {
			t.Fatalf("%s: %s: %v", name, k, err)
		}
		var v any = got
		for _, p := range path {
			v = v.(map[string]any)[p]
		}
		g, ok := v.(float64)
		if !ok || math.Abs(g-w) > 1e-9*math.Abs(w) {
			t.Errorf("%s: %s = %v, BLIS f90a1e3a %v", name, k, v, w)
		}
	}
}

// blisF90Line is a `blis run` command line as simulate's arguments: `blis`
// replaced by `optimize simulate`, the files it names (--workload-spec,
// --policy-config) read from dir.
func blisF90Line(t *testing.T, line, dir string) []string {
	t.Helper()
	fields := strings.Fields(line)
	if len(fields) < 2 || fields[0] != "blis" || fields[1] != "run" {
		t.Fatalf("not a blis run line: %q", line)
	}
	args := append([]string{"simulate"}, fields[1:]...)
	for i := 1; i < len(args); i++ {
		if args[i-1] == "--workload-spec" || args[i-1] == "--policy-config" {
			args[i] = filepath.Join(dir, args[i])
		}
	}
	return args
}
