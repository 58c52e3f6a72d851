package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"optimize/calibration"
	"optimize/internal/testkit"
)

// calibrateJSON runs calibrate with --output json and decodes the reports.
func calibrateJSON(t *testing.T, args ...string) []calibration.Report {
	t.Helper()
	code, stdout, stderr := run(t, append([]string{"calibrate", "--output", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("calibrate: %s", stderr)
	}
	var reports []calibration.Report
	if strings.HasPrefix(strings.TrimSpace(stdout), "{") { // one run: its report
		reports = make([]calibration.Report, 1)
		if err := json.Unmarshal([]byte(stdout), &reports[0]); err != nil {
			t.Fatal(err)
		}
		return reports
	}
	if err := json.Unmarshal([]byte(stdout), &reports); err != nil {
		t.Fatal(err)
	}
	return reports
}

// signedPct is a report's workload-level error of a metric, in percent.
func signedPct(r calibration.Report, metric string, pick func(calibration.Aggregates) (float64, float64)) float64 {
	real, sim := pick(r.Metrics[metric].Workload)
	return 100 * calibration.Signed(real, sim)
}

func meanOf(a calibration.Aggregates) (float64, float64) { return a.RealMean, a.SimMean }
func p99Of(a calibration.Aggregates) (float64, float64)  { return a.RealP99, a.SimP99 }

// Replayed as BLIS replays them and compared as BLIS calibrate compares
// them, the shared real runs give the trained-physics world's known
// errors (issue 39's table, within half a point): Qwen3-14B TP1 at 2, 8
// and 12 req/s (vLLM 0.23, H100; the server's max_num_batched_tokens and
// num_gpu_blocks from its server_config.json), Llama-2-70B TP4 and
// Llama-2-7B TP1 (inference-perf, general profile).
func TestCalibrateReproducesTheKnownErrors(t *testing.T) {
	a, b := testkit.SharedData(t, "sim2real/A"), testkit.SharedData(t, "sim2real/B")
	runs := []string{
		filepath.Join(a, "sweep_rate_agg_2rps"), filepath.Join(a, "sweep_rate_agg_8rps"), filepath.Join(a, "w5_sweep_agg12"),
		filepath.Join(b, "20260217-202857-llama-2-70b-tp4-general.meta.json"),
		filepath.Join(b, "20260217-231439-llama-2-7b-tp1-general.meta.json"),
	}
	want := [][3]float64{ // TTFT mean, E2E mean, E2E P99 errors, %
		{-42, 1.7, -6.6}, {-54, -19, -34}, {-67, -42, -57}, {5.5, 0.8, 3.7}, {58918, 805, 1513},
	}
	reports := calibrateJSON(t, append(runs, "--hardware", "H100")...)
	if len(reports) != len(runs) {
		t.Fatalf("%d reports for %d runs", len(reports), len(runs))
	}
	for i, r := range reports {
		got := [3]float64{signedPct(r, calibration.TTFT, meanOf), signedPct(r, calibration.E2E, meanOf), signedPct(r, calibration.E2E, p99Of)}
		for k := range got {
			if tol := math.Max(0.6, math.Abs(want[i][k])*0.002); math.Abs(got[k]-want[i][k]) > tol {
				t.Errorf("%s: errors %.1f %%, want %.1f %%", filepath.Base(runs[i]), got, want[i])
				break
			}
		}
		if r.Trace.MatchedPairs < 1000 || r.TTFTTolerance == nil || r.TTFTTolerance.Within {
			t.Errorf("%s: %d pairs, TTFT verdict %+v", filepath.Base(runs[i]), r.Trace.MatchedPairs, r.TTFTTolerance)
		}
	}
	if m := strings.Join(reports[0].ConfigMatch.Matched, "; "); !strings.Contains(m, "kv.total_blocks=18038 (server_config.json num_gpu_blocks)") ||
		!strings.Contains(m, "batch.max_num_scheduled_tokens=8192") {
		t.Errorf("the Qwen run's server settings are not the replay's: %s", m)
	}
	if m := strings.Join(reports[3].ConfigMatch.Matched, "; "); !strings.Contains(m, "kv.total_blocks=31356") || !strings.Contains(m, "tp=4") {
		t.Errorf("the Llama-2-70B run's settings are not the replay's: %s", m)
	}
}

// One run prints BLIS calibrate's report as text; a flag overrides a
// setting the run records, and the report says so; bad options are one
// line naming the flag.
func TestCalibrateTextAndErrors(t *testing.T) {
	run2 := filepath.Join(testkit.SharedData(t, "sim2real/A"), "sweep_rate_agg_2rps")
	code, stdout, stderr := run(t, "calibrate", run2, "--hardware", "H100", "--total-kv-blocks", "9000")
	if code != 0 {
		t.Fatal(stderr)
	}
	for _, want := range []string{"matched pairs: 1212 of 1212 requests", "TTFT mean real", "E2E  P99", "ITL  MAPE",
		"not from the run: kv.total_blocks: --total-kv-blocks (the run's server_config.json num_gpu_blocks is 18038)", "[EXCEEDS]"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	// A flag overrides a setting the run records, even one the catalog
	// could not take (a served model name it does not know).
	reports := calibrateJSON(t, run2, "--hardware", "H100", "--model", "meta-llama/llama-3.1-8b-instruct")
	if d := strings.Join(reports[0].ConfigMatch.Defaulted, "; "); !strings.Contains(d, "model: --model (the run's server_config.json model is qwen/qwen3-14b)") ||
		!strings.Contains(reports[0].World, "meta-llama/llama-3.1-8b-instruct") {
		t.Errorf("--model over the run's model: world %s, defaulted %s", reports[0].World, d)
	}
	for _, c := range []struct{ args, want string }{
		{"--warmup-requests -2", "--warmup-requests: must be >= 0, got -2"},
		{"--network-bandwidth-mbps -1", "--network-bandwidth-mbps: must be a finite number >= 0, got -1"},
		{"--trace-window 20m-30m", "trace window: 20m0s-30m0s holds no request of the trace"},
		{"--trace-client-cap x", `--trace-client-cap: trace client-cap: "x" is not a count >= 0`},
	} {
		code, _, stderr := run(t, append([]string{"calibrate", run2}, strings.Fields(c.args)...)...)
		if code == 0 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%s: exit %d, %q; want one line with %q", c.args, code, stderr, c.want)
		}
	}
}

// A run of a server that serves its model under another name: without a
// world file the name is an error saying how to name the model; a world
// file names it, and the report says so.
func TestCalibrateServedModelName(t *testing.T) {
	src := filepath.Join(testkit.SharedData(t, "sim2real/A"), "sweep_rate_agg_2rps")
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(src, "trace.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.csv.gz"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	header := "trace_version: 3\ntime_unit: us\nmode: real\nwarm_up_requests: 0\nserver: {type: vllm, model: my-chat}\n"
	if err := os.WriteFile(filepath.Join(dir, "trace.yaml"), []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, "calibrate", dir)
	if code == 0 || !strings.Contains(errs, `header server.model: model: "my-chat" is not allowed`) || !strings.Contains(errs, "give the setting's flag") {
		t.Errorf("an unknown served model name: exit %d, %s", code, errs)
	}
	reports := calibrateJSON(t, dir, "--world-file", "qwen3-14b-h100-vllm0.23")
	if d := strings.Join(reports[0].ConfigMatch.Defaulted, "; "); !strings.Contains(d, "model=qwen/qwen3-14b (--world-file; the run's header server.model is my-chat, a served model name") {
		t.Errorf("defaulted: %s", d)
	}
}
