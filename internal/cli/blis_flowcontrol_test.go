package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// BLIS f90a1e3a's flow control, command line for command line: three SLO
// classes in three tenants in heavy overload on 4 instances, under the
// utilization detector (no caps; per-band and global capacity; queue
// shedding; in-flight eviction alone, with queue shedding and a TTL, and
// with P/D pools, whose split requests it never evicts)
// and the concurrency detector (slo-deadline order, round-robin fairness,
// usage-limit ceilings, TTL), seeds 42–44.
// testdata/blis_f90a1e3a/flow_control.json holds each BLIS command line
// and BLIS's figures; each line runs here as `optimize simulate run` with
// its flags unchanged plus the file's ours_extra. Means must agree within
// 1 %, P99s within 3 %, completions and every gateway counter (rejected,
// shed, expired, evicted, and BLIS's per-class "Shed" lines) exactly.
func TestBLISf90a1e3aFlowControl(t *testing.T) {
	const dir = "testdata/blis_f90a1e3a"
	data, err := os.ReadFile(filepath.Join(dir, "flow_control.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Configs map[string]struct {
			OursExtra []string `json:"ours_extra"`
			Seeds     map[string]struct {
				BLISCommand string `json:"blis_command"`
				BLIS        struct {
					Completed   float64            `json:"completed_requests"`
					Rejected    float64            `json:"gateway_rejected"`
					Shed        float64            `json:"gateway_shed"`
					Expired     float64            `json:"gateway_expired"`
					Evicted     float64            `json:"gateway_evicted"`
					ShedByClass map[string]float64 `json:"shed_by_class"`
				} `json:"blis"`
			} `json:"seeds"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	// The latency figures by name.
	var figures struct {
		Configs map[string]struct {
			Seeds map[string]struct {
				BLIS map[string]any `json:"blis"`
			} `json:"seeds"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(data, &figures); err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, name := range sortedKeys(file.Configs) {
		cfg := file.Configs[name]
		for _, seed := range sortedKeys(cfg.Seeds) {
			c := cfg.Seeds[seed]
			args := blisF90Line(t, c.BLISCommand, dir)
			args = append(append(args, cfg.OursExtra...), "--output", "json")
			code, out, errs := run(t, args...)
			if code != 0 {
				t.Fatalf("%s seed %s: exit %d: %s", name, seed, code, errs)
			}
			var got struct {
				Completed float64                     `json:"completed"`
				TTFT      struct{ Mean, P99 float64 } `json:"ttft_ms"`
				E2E       struct{ Mean, P99 float64 } `json:"e2e_ms"`
				Rejected  *float64                    `json:"gateway_rejected"`
				Shed      *float64                    `json:"gateway_shed"`
				Expired   *float64                    `json:"gateway_expired"`
				Evicted   *float64                    `json:"gateway_evicted"`
				PerSLO    map[string]struct {
					Shed    *float64 `json:"gateway_shed"`
					Expired *float64 `json:"gateway_expired"`
					Evicted *float64 `json:"gateway_evicted"`
				} `json:"per_slo"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			if got.Rejected == nil || got.Shed == nil || got.Expired == nil || got.Evicted == nil {
				t.Fatalf("%s seed %s: no gateway counters in %s", name, seed, out)
			}
			want := figures.Configs[name].Seeds[seed].BLIS
			at := name + " seed " + seed
			for _, m := range []struct {
				key string
				got float64
				tol float64
			}{
				{"ttft_mean_ms", got.TTFT.Mean, 0.01}, {"e2e_mean_ms", got.E2E.Mean, 0.01},
				{"ttft_p99_ms", got.TTFT.P99, 0.03}, {"e2e_p99_ms", got.E2E.P99, 0.03},
			} {
				w, _ := want[m.key].(float64)
				if math.Abs(m.got-w) > m.tol*math.Abs(w) {
					t.Errorf("%s: %s = %v, BLIS %v (tolerance %g %%)", at, m.key, m.got, w, 100*m.tol)
				}
			}
			b := c.BLIS
			for _, m := range []struct {
				what      string
				got, want float64
			}{
				{"completed", got.Completed, b.Completed}, {"gateway rejected", *got.Rejected, b.Rejected},
				{"gateway shed", *got.Shed, b.Shed}, {"gateway expired", *got.Expired, b.Expired},
				{"gateway evicted", *got.Evicted, b.Evicted},
			} {
				if m.got != m.want {
					t.Errorf("%s: %s = %v, BLIS %v", at, m.what, m.got, m.want)
				}
			}
			// BLIS's "Shed (class)": queue sheds, expiries and evictions
			// (admission rejections too, none under flow control).
			for class, cs := range got.PerSLO {
				n := *cs.Shed + *cs.Expired + *cs.Evicted
				if n != b.ShedByClass[class] {
					t.Errorf("%s: %s shed %v, BLIS %v", at, class, n, b.ShedByClass[class])
				}
			}
			for class := range b.ShedByClass {
				if _, ok := got.PerSLO[class]; !ok {
					t.Errorf("%s: BLIS sheds class %s, which we do not report", at, class)
				}
			}
			runs++
		}
	}
	if runs < 7*3 {
		t.Fatalf("%d runs; want 7 command lines × 3 seeds", runs)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return slices.Clip(keys)
}
