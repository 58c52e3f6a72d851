package cli

import (
	"encoding/json"
	"math"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// pdWorld is BLIS f90a1e3a's world for a `blis run` line that names no
// latency model: the era's defaults (trained-physics, BLIS's KV estimate,
// its weighted profile and signal delays) on one H100 per instance.
var pdWorld = []string{"--model", "meta-llama/llama-3.1-8b-instruct", "--hardware", "H100", "--tp", "1", "--era", "f90a1e3a"}

// BLIS f90a1e3a's prefill/decode disaggregation, request for request: the
// four P/D command lines (always on 2P:2D and 1P:3D, prefix-threshold 256
// on a mixed workload, a slower transfer with contention) and always on
// 2P:2D under round-robin (one counter for both pools pins every request
// to one instance of each), seeds 42–44, run through `simulate run` and
// compared with BLIS's cluster figures (testdata/blis_f90a1e3a/pd.json).
func TestBLISf90a1e3aPD(t *testing.T) {
	raw, err := os.ReadFile("testdata/blis_f90a1e3a/pd.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Name, Spec, BLIS string
			Seed             int64
			Args             []string
			BLISCluster      map[string]float64 `json:"blis_cluster"`
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) < 13 {
		t.Fatalf("%d runs; want 4 command lines × 3 seeds and round-robin", len(doc.Runs))
	}
	for _, r := range doc.Runs {
		args := blisF90Line(t, r.BLIS, "testdata/blis_f90a1e3a")
		args = append(args, "--era", "f90a1e3a", "--output", "json")
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("%s seed %d: exit %d: %s", r.Name, r.Seed, code, errs)
		}
		var got struct {
			Completed, Dropped, Preemptions float64
			TokensPerSec                    float64                     `json:"tokens_per_sec"`
			TTFT                            struct{ Mean, P99 float64 } `json:"ttft_ms"`
			E2E                             struct{ Mean, P99 float64 } `json:"e2e_ms"`
			PD                              struct {
				Disaggregated float64
				TransferMean  float64 `json:"transfer_mean_ms"`
				TransferP99   float64 `json:"transfer_p99_ms"`
			}
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		w := r.BLISCluster
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"completed", got.Completed, w["completed_requests"]},
			{"dropped", got.Dropped, w["dropped_unservable"]},
			{"preemptions", got.Preemptions, w["preemption_count"]},
			{"tokens/s", got.TokensPerSec, w["tokens_per_sec"]},
			{"TTFT mean ms", got.TTFT.Mean, w["ttft_mean_ms"]},
			{"TTFT p99 ms", got.TTFT.P99, w["ttft_p99_ms"]},
			{"E2E mean ms", got.E2E.Mean, w["e2e_mean_ms"]},
			{"E2E p99 ms", got.E2E.P99, w["e2e_p99_ms"]},
			{"disaggregated", got.PD.Disaggregated, w["disaggregated"]},
			// BLIS prints µs to 0.1.
			{"transfer mean µs", math.Round(got.PD.TransferMean * 10000), math.Round(w["transfer_mean_us"] * 10)},
			{"transfer p99 µs", math.Round(got.PD.TransferP99 * 10000), math.Round(w["transfer_p99_us"] * 10)},
		} {
			if math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want) {
				t.Errorf("%s seed %d: %s = %v, BLIS f90a1e3a %v (%s)", r.Name, r.Seed, c.name, c.got, c.want, r.BLIS)
			}
		}
	}
}

// The same P/D run gives byte-identical output at GOMAXPROCS 1 and 2, run
// after run.
func TestPDDeterministic(t *testing.T) {
	args := append([]string{"simulate", "run", "--routing-policy", "weighted"}, pdWorld...)
	args = append(args, "--workload-spec", "testdata/blis_f90a1e3a/pd-mixed.yaml", "--num-requests", "400", "--num-instances", "5",
		"--prefill-instances", "2", "--decode-instances", "2", "--prefill-decode-instances", "1", "--pd-decider", "prefix-threshold",
		"--pd-prefix-threshold", "256", "--pd-transfer-contention", "--decode-routing-scorers", "precise-prefix-cache-scorer:1,queue-scorer:1",
		"--seeds", "42,43", "--output", "json")
	var first string
	for i, procs := range []int{1, 2, 1, 2} {
		prev := runtime.GOMAXPROCS(procs)
		code, out, errs := run(t, args...)
		runtime.GOMAXPROCS(prev)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if i == 0 {
			first = out
			continue
		}
		if out != first {
			t.Fatalf("run %d (GOMAXPROCS %d) differs from the first:\n%s\n---\n%s", i, procs, out, first)
		}
	}
	if !json.Valid([]byte(first)) {
		t.Fatalf("not JSON: %s", first)
	}
}

// A decode instance short of KV preempts its decode sub-requests while
// the transfers queued behind them hold every other block. Re-admitted
// through BLIS f90a1e3a's decode-only path (one token's KV at input
// position 0, then the re-prefill as a running request), the run ends
// with BLIS's completions, drops, preemptions and E2E; re-admitted as a
// fresh request it waited at the queue's head for its whole prompt's KV
// and the run never ended. TTFT differs by design: ours is arrival to the
// first token after the re-prefill, BLIS's projection its re-admission
// plus one decode step (within 2 % here).
func TestPDPreemptedDecodeSubRequestsReadmit(t *testing.T) {
	raw, err := os.ReadFile("testdata/blis_f90a1e3a/pd_preempt.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			KVBlocks int                `json:"kv_blocks"`
			BLIS     map[string]float64 `json:"blis_cluster"`
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Runs {
		code, out, errs := run(t, append(append([]string{"simulate"}, pdWorld...), "--seed", "42", "--num-instances", "2", "--prefill-instances", "1",
			"--decode-instances", "1", "--pd-decider", "always", "--workload-spec", "testdata/blis_f90a1e3a/autoscaler/as-ramp.yaml",
			"--total-kv-blocks", strconv.Itoa(r.KVBlocks), "--output", "json")...)
		if code != 0 {
			t.Fatalf("%d blocks: exit %d: %s", r.KVBlocks, code, errs)
		}
		var got struct {
			Completed, Dropped, Preemptions float64
			TTFT                            struct{ Mean float64 }      `json:"ttft_ms"`
			E2E                             struct{ Mean, P99 float64 } `json:"e2e_ms"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		w := r.BLIS
		if got.Completed != w["completed_requests"] || got.Dropped != w["dropped_unservable"] || got.Preemptions != w["preemption_count"] ||
			math.Abs(got.E2E.Mean-w["e2e_mean_ms"]) > 1e-9*w["e2e_mean_ms"] {
			t.Errorf("%d blocks: completed %v, dropped %v, preemptions %v, E2E mean %v; BLIS %v, %v, %v, %v", r.KVBlocks,
				got.Completed, got.Dropped, got.Preemptions, got.E2E.Mean, w["completed_requests"], w["dropped_unservable"], w["preemption_count"], w["e2e_mean_ms"])
		}
		if d := got.TTFT.Mean/w["ttft_mean_ms"] - 1; d < 0 || d > 0.02 {
			t.Errorf("%d blocks: TTFT mean %v against BLIS's %v (%+.2f %%); want ours at most 2 %% above", r.KVBlocks, got.TTFT.Mean, w["ttft_mean_ms"], 100*d)
		}
	}
}
