package studies

import (
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"

	"optimize/internal/testkit"
	"optimize/search"
	"optimize/storage"
)

// proposeHistories caches one filled database per (template, sampler,
// trials) across the benchmark's repeated runs: filling 10,000 trials
// takes far longer than the proposals measured.
var proposeHistories sync.Map

// BenchmarkPropose times one proposal (Ask, then Fail so that the history
// keeps its size) with n complete trials in SQLite, for slo-cascade's space
// and joint-slo's, the largest shipped space, under the Gaussian process
// (the default), TPE and ParEGO.
func BenchmarkPropose(b *testing.B) {
	reg, _ := testkit.Builtins(b)
	dir := b.TempDir()
	for _, template := range []string{"slo-cascade", "joint-slo"} {
		tpl, err := reg.Get(template)
		if err != nil {
			b.Fatal(err)
		}
		space := tpl.Space()
		for _, method := range []search.Method{search.MethodGP, search.MethodTPE, search.MethodParEGO} {
			for _, n := range []int{100, 1000, 10000} {
				b.Run(fmt.Sprintf("%s/%s/%d", template, method, n), func(b *testing.B) {
					key := fmt.Sprintf("%s-%s-%d", template, method, n)
					path := filepath.Join(dir, key+".db")
					once, _ := proposeHistories.LoadOrStore(key, new(sync.Once))
					once.(*sync.Once).Do(func() { fillHistory(b, path, space, n) })
					st, err := storage.Open(path)
					if err != nil {
						b.Fatal(err)
					}
					defer st.Close()
					smp, err := search.NewSampler(st.Goptuna(), "bench", space, method, 1, samplerOptions())
					if err != nil {
						b.Fatal(err)
					}
					// One proposal first, as in a running study: the
					// first read of the history is the whole study.
					id, _, err := smp.Ask(n)
					if err != nil {
						b.Fatal(err)
					}
					if err := smp.Fail(id); err != nil {
						b.Fatal(err)
					}
					number := n + 1
					b.ResetTimer()
					for b.Loop() {
						id, _, err := smp.Ask(number)
						if err != nil {
							b.Fatal(err)
						}
						b.StopTimer()
						if err := smp.Fail(id); err != nil {
							b.Fatal(err)
						}
						number++
						b.StartTimer()
					}
				})
			}
		}
	}
}

// fillHistory stores n complete trials of uniform draws with a smooth
// synthetic score (and, for ParEGO, two synthetic objective ratios).
func fillHistory(b *testing.B, path string, space []search.Param, n int) {
	st, err := storage.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(); err != nil {
		b.Fatal(err)
	}
	// Uniform draws, written like any trial (the method proposes nothing
	// here: only the benchmark's own proposals are its).
	smp, err := search.NewSampler(st.Goptuna(), "bench", space, search.MethodRandom, 7, samplerOptions())
	if err != nil {
		b.Fatal(err)
	}
	for number := 0; number < n; number++ {
		id, values, err := smp.Ask(number)
		if err != nil {
			b.Fatal(err)
		}
		score, spread := syntheticScore(space, values)
		e := search.Evaluation{Objectives: []float64{score, spread}, Ratios: []float64{score, 1 + spread}}
		if err := smp.TellObjectives(id, e); err != nil {
			b.Fatal(err)
		}
	}
}

// syntheticScore is a bowl over the active numeric axes scaled to [0,1],
// and a second objective that pulls the other way.
func syntheticScore(space search.Space, values []search.Value) (score, spread float64) {
	for i, p := range space {
		if values[i].Absent() || p.Kind == search.Categorical || p.High == p.Low {
			continue
		}
		lo, hi, v := p.Low, p.High, values[i].Number
		if p.Kind == search.LogFloat {
			lo, hi, v = math.Log(lo), math.Log(hi), math.Log(v)
		}
		x := (v - lo) / (hi - lo)
		score += (x - 0.3) * (x - 0.3)
		spread += (x - 0.7) * (x - 0.7)
	}
	return score, spread
}
