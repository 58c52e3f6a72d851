package workload

import (
	"bytes"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseSpec: parsing never panics, errors are one line, a spec that
// parses can be generated from without panicking, and a replay of its
// Draws gives the generator's requests.
func FuzzParseSpec(f *testing.F) {
	files, _ := fs.Glob(builtins.FS, builtins.Dir+"/*.yaml")
	for _, name := range files {
		data, err := fs.ReadFile(builtins.FS, name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(baseSpec))
	f.Add([]byte(closedLoopSpec))
	f.Add([]byte("a: &x [*x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := ParseSpec("f.yaml", data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if !cheapToGenerate(spec) {
			return
		}
		opt := Options{Seed: 1, BlockSize: 16, NumRequests: 20, Horizon: 1e9}
		g, err := NewGenerator(spec, opt)
		if err != nil {
			t.Fatalf("valid spec rejected by NewGenerator: %v", err)
		}
		last := int64(-1)
		for r := pop(g); r != nil; r = pop(g) {
			if r.Arrival < last || r.InputLen < 1 || r.OutputLen < 1 || int(r.Content.Total) != int(r.InputLen+r.OutputLen)/16 {
				t.Fatalf("bad request %+v after arrival %d", r, last)
			}
			last = r.Arrival
			g.Done(r, r.Arrival+10, true)
		}
		d, err := NewDraws(spec, opt)
		if err != nil {
			t.Fatalf("valid spec rejected by NewDraws: %v", err)
		}
		fb := unevenService(10)
		if !slices.Equal(drainWith(d.Generator(), fb), drainWith(mustGenerator(t, spec, opt), fb)) {
			t.Fatal("a replay differs from a fresh generator")
		}
	})
}

// cheapToGenerate skips specs that are valid but slow to pull 20 requests
// from (a far lifecycle window at a high rate is drawn gap by gap, as in
// BLIS; huge lengths and round counts draw millions of tokens).
func cheapToGenerate(spec *Spec) bool {
	for _, c := range spec.Clients {
		if c.Lifecycle != nil || (c.PrefixLength != nil && *c.PrefixLength > 1e4) {
			return false
		}
		if mt := c.multiTurn(); mt != nil && mt.MaxRounds > 10 {
			return false
		}
		for _, d := range []Distribution{c.Input, c.Output} {
			for name, v := range d.Params {
				if n, err := strconv.Atoi(strings.TrimSpace(name)); d.Type == "empirical" && err == nil && n > 1e4 {
					return false
				}
				if (name == "mean" || name == "max" || name == "value" || name == "xm" || name == "mu") && v > 1e4 {
					return false
				}
				if d.Type == "pareto_lognormal" && (name == "sigma" && v > 3 || name == "alpha" && v < 1) {
					return false
				}
			}
		}
	}
	return true
}

// FuzzLoadTrace: header and CSV parsing never panic and errors are one line.
func FuzzLoadTrace(f *testing.F) {
	f.Add([]byte(traceHeaderYAML), []byte(traceCSV))
	f.Add([]byte("trace_version: 3\ntime_unit: us\n"), []byte("arrival_time_us,input_tokens,output_tokens,prefix_group,prefix_length\n0,10,1,a,64\n"))
	f.Fuzz(func(t *testing.T, header, data []byte) {
		if _, err := checkTraceHeader("h.yaml", header); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error %q", err)
		}
		src, err := parseTrace("d.csv", bytes.NewReader(data), 16, false)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		for n := 0; n < 20; n++ {
			r := pop(src)
			if r == nil {
				break
			}
			if r.InputLen < 1 || int(r.Content.Total) != int(r.InputLen+r.OutputLen)/16 {
				t.Fatalf("bad request %+v", r)
			}
			src.Done(r, 0, true)
		}
	})
}
