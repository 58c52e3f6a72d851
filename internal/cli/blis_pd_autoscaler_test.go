package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pdAutoscalerArgs is simulate's command line for a BLIS line of
// pd-expected.json: its flags, the files read from autoscalerDir, and
// ours_extra.
func pdAutoscalerArgs(command, extra string) []string {
	fields := strings.Fields(command)[1:]
	args := []string{"simulate"}
	for i, f := range fields {
		if i > 0 && (fields[i-1] == "--workload-spec" || fields[i-1] == "--policy-config") {
			f = filepath.Join(autoscalerDir, f)
		}
		args = append(args, f)
	}
	return append(append(args, strings.Fields(extra)...), "--output", "json")
}

// BLIS f90a1e3a's prefill/decode pools with its autoscaler, request for
// request (seeds 42–44): its 1 s tick drains instance_0, the only prefill
// instance, and instance_1, a decode instance; the requests after it are
// rejected at their prefill's routing (292, 294, 293) and, seed 44, the
// one whose decode instance was drained before its transfer is dropped.
// Completed, rejected and dropped requests and each instance's completed
// requests are BLIS's exactly, and so are TTFT and E2E mean and P99.
// The same line with autoscaler.min_replicas 1 (llm-d's behaviour: each
// pool role scaled on its own, at least one routable instance each)
// drains a decode instance only: all 300 requests complete.
func TestBLISf90a1e3aPDAutoscaler(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(autoscalerDir, "pd-expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OursExtra string `json:"ours_extra"`
		Runs      []struct {
			Seed        int64
			Command     string  `json:"blis_command"`
			Completed   float64 `json:"completed"`
			Rejected    float64 `json:"rejected_routing"`
			Dropped     float64 `json:"dropped_unservable"`
			TTFTMean    float64 `json:"ttft_mean_ms"`
			TTFTP99     float64 `json:"ttft_p99_ms"`
			E2EMean     float64 `json:"e2e_mean_ms"`
			E2EP99      float64 `json:"e2e_p99_ms"`
			PerInstance []struct {
				ID        string `json:"id"`
				Completed int64  `json:"completed"`
			} `json:"per_instance"`
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 3 {
		t.Fatalf("%d runs; want seeds 42–44", len(doc.Runs))
	}
	type result struct {
		Completed, Rejected, Dropped float64
		TTFT                         struct{ Mean, P99 float64 } `json:"ttft_ms"`
		E2E                          struct{ Mean, P99 float64 } `json:"e2e_ms"`
		Autoscaler                   struct {
			ScaleDowns int `json:"scale_downs"`
			Replicas   []struct{ Prefill int }
			Instances  []struct {
				Name      string
				Completed int64
			}
		}
	}
	for _, want := range doc.Runs {
		args := pdAutoscalerArgs(want.Command, doc.OursExtra)
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("seed %d: exit %d: %s", want.Seed, code, errs)
		}
		var got result
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.Completed != want.Completed || got.Rejected != want.Rejected || got.Dropped != want.Dropped {
			t.Errorf("seed %d: completed %v, rejected %v, dropped %v; BLIS %v, %v, %v", want.Seed, got.Completed, got.Rejected, got.Dropped, want.Completed, want.Rejected, want.Dropped)
		}
		for _, c := range []struct {
			what      string
			got, want float64
		}{{"TTFT mean", got.TTFT.Mean, want.TTFTMean}, {"TTFT P99", got.TTFT.P99, want.TTFTP99},
			{"E2E mean", got.E2E.Mean, want.E2EMean}, {"E2E P99", got.E2E.P99, want.E2EP99}} {
			if math.Abs(c.got-c.want) > 1e-9*c.want {
				t.Errorf("seed %d: %s %v ms, BLIS %v ms", want.Seed, c.what, c.got, c.want)
			}
		}
		if len(got.Autoscaler.Instances) != len(want.PerInstance) {
			t.Fatalf("seed %d: %d instances, BLIS %d", want.Seed, len(got.Autoscaler.Instances), len(want.PerInstance))
		}
		for i, w := range want.PerInstance {
			if g := got.Autoscaler.Instances[i]; g.Name != w.ID || g.Completed != w.Completed {
				t.Errorf("seed %d: instance %d is %s with %d completed, BLIS %s with %d", want.Seed, i, g.Name, g.Completed, w.ID, w.Completed)
			}
		}

		code, out, errs = run(t, append(args, "--set", "autoscaler.min_replicas=1")...)
		if code != 0 {
			t.Fatalf("seed %d, min replicas 1: exit %d: %s", want.Seed, code, errs)
		}
		got = result{}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.Completed != 300 || got.Rejected != 0 || got.Dropped != 0 || got.Autoscaler.ScaleDowns != 1 {
			t.Errorf("seed %d, min replicas 1: completed %v, rejected %v, dropped %v, %d drained; want 300, 0, 0, one decode instance", want.Seed, got.Completed, got.Rejected, got.Dropped, got.Autoscaler.ScaleDowns)
		}
		for _, p := range got.Autoscaler.Replicas {
			if p.Prefill != 1 {
				t.Errorf("seed %d, min replicas 1: %d prefill instances routable; want 1 throughout", want.Seed, p.Prefill)
				break
			}
		}
		if !strings.Contains(errs, "each prefill/decode pool role is scaled on its own") {
			t.Errorf("seed %d, min replicas 1: no note on the per-role targets in %q", want.Seed, errs)
		}
	}
}
