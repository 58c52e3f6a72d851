package metrics

import (
	"math"
	"testing"

	"optimize/simcore"
)

// A request meets its class's targets when it completed within each one
// set; rejected and unfinished requests miss. Critical has TTFT 100 ms,
// mean ITL 10 ms and E2E 1 s; standard has none; sheddable E2E only.
func TestAttainmentAndGoodput(t *testing.T) {
	var tg Targets
	crit, std, shed := simcore.SLOCritical, simcore.SLOStandard, simcore.SLOSheddable
	tg.TTFT.V[crit], tg.TTFT.Set[crit] = 100, true
	tg.ITL.V[crit], tg.ITL.Set[crit] = 10, true
	tg.E2E.V[crit], tg.E2E.Set[crit] = 1000, true
	tg.E2E.V[shed], tg.E2E.Set[shed] = 1000, true
	var c Collector
	c.SetTargets(tg)
	const (
		done = iota
		rej
		open
	)
	reqs := []struct {
		slo         simcore.SLOClass
		ttft, itls  int64 // µs: TTFT and the sum of inter-token latencies
		out         int32
		outcome     int
		meets       bool
		description string
	}{
		{crit, 100_000, 90_000, 10, done, true, "TTFT at the target, 10 ms per token"},
		{crit, 100_001, 0, 1, done, false, "TTFT 1 µs late"},
		{crit, 50_000, 99_000, 10, done, false, "11 ms per token"},
		{crit, 50_000, 900_000, 91, done, true, "10 ms per token over 90 gaps, E2E 950 ms"},
		{crit, 90_000, 920_000, 200, done, false, "4.6 ms per token, but E2E 1010 ms"},
		{crit, 90_000, 0, 1, done, true, "one token: ITL 0"},
		{crit, 0, 0, 10, rej, false, "rejected"},
		{crit, 10_000, 0, 10, open, false, "first token in time, never completed"},
		{std, 10_000, 0, 5, done, false, "no target: not counted"},
		{shed, 900_000, 100_000, 50, done, true, "E2E 1000 ms"},
		{shed, 0, 0, 5, rej, false, "shed"},
	}
	for i, q := range reqs {
		r := &simcore.Request{ID: int64(i), SLO: q.slo, OutputLen: q.out, FirstToken: -1}
		c.Arrived(r)
		switch q.outcome {
		case rej:
			c.Rejected(r)
		case done, open:
			r.FirstToken, r.ITLSum = q.ttft, q.itls
			c.FirstToken(r)
			if q.outcome == done {
				c.Completed(r)
			}
		}
	}
	s := c.Summarize(RunInfo{Makespan: 2_000_000})
	check := func(name string, got *float64, want float64) {
		t.Helper()
		if got == nil || math.Abs(*got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("critical attainment", s.PerSLO["critical"].Attainment, 3.0/8)
	check("critical goodput", s.PerSLO["critical"].Goodput, 3.0/2)
	check("sheddable attainment", s.PerSLO["sheddable"].Attainment, 1.0/2)
	check("sheddable goodput", s.PerSLO["sheddable"].Goodput, 1.0/2)
	check("attainment", s.Attainment, 4.0/10)
	check("goodput", s.Goodput, 4.0/2)
	if st := s.PerSLO["standard"]; st.Attainment != nil || st.Goodput != nil {
		t.Error("attainment reported for a class without a target")
	}

	// Mean averages per-class figures as ttft_attainment (over the runs
	// with the class) and the overall ones over the runs that have them.
	var none Collector
	r := &simcore.Request{SLO: crit, OutputLen: 1}
	none.Arrived(r)
	plain := none.Summarize(RunInfo{Makespan: 1_000_000})
	if plain.Attainment != nil || plain.Goodput != nil || plain.PerSLO["critical"].Attainment != nil {
		t.Fatal("attainment reported for a run without targets")
	}
	m := Mean([]Summary{s, plain, s})
	check("mean attainment", m.Attainment, 4.0/10)
	check("mean goodput", m.Goodput, 2)
	m2 := Mean([]Summary{s, s})
	check("mean critical attainment", m2.PerSLO["critical"].Attainment, 3.0/8)
	check("mean critical goodput", m2.PerSLO["critical"].Goodput, 3.0/2)
	if m.Attainment == s.Attainment {
		t.Error("Mean shares a pointer with a run")
	}
}
