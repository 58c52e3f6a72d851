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
	f, err := os.Open("testdata/blis_f90a1e3a/one_instance.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	var head []string
	rows := 0
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
		want := map[string]string{}
		for i, h := range head {
			want[h] = fields[i]
		}
		spec := filepath.Join(dir, fmt.Sprintf("spec-%d.yaml", rows))
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
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s %s TP%s seed %s", want["model"], want["gpu"], want["tp"], want["seed"])
		for k, path := range map[string][]string{"ttft_mean_ms": {"ttft_ms", "mean"}, "ttft_p99_ms": {"ttft_ms", "p99"},
			"e2e_mean_ms": {"e2e_ms", "mean"}, "e2e_p99_ms": {"e2e_ms", "p99"}, "tokens_per_sec": {"tokens_per_sec"},
			"preemptions": {"preemptions"}, "completed": {"completed"}} {
			w, _ := strconv.ParseFloat(want[k], 64)
			var v any = got
			for _, p := range path {
				v = v.(map[string]any)[p]
			}
			g, ok := v.(float64)
			if !ok || math.Abs(g-w) > 1e-9*math.Abs(w) {
				t.Errorf("%s: %s = %v, BLIS f90a1e3a %v", name, k, v, w)
			}
		}
		code, text, _ := run(t, append(args[:len(args)-2], "--num-requests", "1")...)
		if code != 0 || !strings.Contains(text, " "+want["kv_blocks"]+" KV blocks per instance") {
			t.Errorf("%s: want %s KV blocks per instance (BLIS's auto-calculated figure) in %q", name, want["kv_blocks"], strings.SplitN(text, "\n", 3)[:2])
		}
		rows++
	}
	if rows < 5*3*3 {
		t.Fatalf("%d runs; want ≥ 5 models × 3 GPUs × 3 seeds", rows)
	}
}
