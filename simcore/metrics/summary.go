package metrics

import "optimize/simcore"

// Summary is one run's result; its JSON form is `simulate --output json`.
type Summary struct {
	Completed       float64                 `json:"completed"`
	Rejected        float64                 `json:"rejected"`
	Dropped         float64                 `json:"dropped"`
	TTFT            Dist                    `json:"ttft_ms"`
	E2E             Dist                    `json:"e2e_ms"`
	ITL             Dist                    `json:"itl_ms"`
	SchedulingDelay Dist                    `json:"scheduling_delay_ms"`
	TokensPerSec    float64                 `json:"tokens_per_sec"`
	ResponsesPerSec float64                 `json:"responses_per_sec"`
	Preemptions     float64                 `json:"preemptions"`
	CacheHitRate    float64                 `json:"cache_hit_rate"`
	KV              KVSummary               `json:"kv"`
	PerSLO          map[string]ClassSummary `json:"per_slo"`
	SLOGap          float64                 `json:"slo_gap"`
	JainFairness    float64                 `json:"jain_fairness"`
	// Attainment and Goodput are over the classes with a latency target
	// (see Targets): the fraction of their arrived requests that met their
	// class's targets, and those requests per second of makespan. Absent
	// when no class that sent requests has a target.
	Attainment   *float64 `json:"attainment,omitempty"`
	Goodput      *float64 `json:"goodput,omitempty"`
	InFlight     float64  `json:"in_flight,omitempty"`
	MakespanMs   float64  `json:"makespan_ms"`
	InputTokens  float64  `json:"input_tokens"`
	OutputTokens float64  `json:"output_tokens"`
}

// KVSummary reports the CPU offload tier's activity.
type KVSummary struct {
	OffloadedBlocks float64 `json:"offloaded_blocks"`
	ReloadedBlocks  float64 `json:"reloaded_blocks"`
	TransferMs      float64 `json:"transfer_ms"`
	ThrashingRate   float64 `json:"thrashing_rate"`
}

// ClassSummary is the per-SLO-class part of a Summary.
type ClassSummary struct {
	Count     float64 `json:"count"`
	Completed float64 `json:"completed"`
	Rejected  float64 `json:"rejected"`
	TTFT      Dist    `json:"ttft_ms"`
	E2E       Dist    `json:"e2e_ms"`
	// TTFTAttainment is the fraction of the class's requests whose first
	// token came within its TTFT target (slo.ttft_target_ms.<class>): requests still in flight at
	// the end count if they had their first token in time; rejected,
	// dropped and never-prefilled ones miss it. Absent without a target.
	TTFTAttainment *float64 `json:"ttft_attainment,omitempty"`
	// Attainment is the fraction of the class's requests that completed
	// within every target the class has (TTFT, mean ITL, E2E; see
	// Targets): rejected, dropped and unfinished requests miss, so
	// shedding cannot raise it. Goodput is those requests per second of
	// makespan. Both absent without a target.
	Attainment *float64 `json:"attainment,omitempty"`
	Goodput    *float64 `json:"goodput,omitempty"`
}

// RunInfo is what the engine knows beyond per-request outcomes.
type RunInfo struct {
	Makespan     simcore.Tick // max over instances of the last event, from t = 0
	CacheHitRate float64      // unweighted mean over instances
	KV           KVSummary
}

// Summarize computes the summary.
func (c *Collector) Summarize(info RunInfo) Summary {
	s := Summary{
		TTFT:            c.dist(&c.ttft, allClasses),
		E2E:             c.dist(&c.e2e, allClasses),
		SchedulingDelay: c.dist(&c.sched, allClasses),
		ITL:             weightedDist(c.itlVals, c.itlCounts),
		Preemptions:     float64(c.preemptions),
		CacheHitRate:    info.CacheHitRate,
		KV:              info.KV,
		PerSLO:          map[string]ClassSummary{},
		InputTokens:     float64(c.inputTokens),
		OutputTokens:    float64(c.outputTokens),
		MakespanMs:      float64(info.Makespan) / 1000,
	}
	done, rej, drop, open := c.Counts()
	s.Completed, s.Rejected, s.Dropped, s.InFlight = float64(done), float64(rej), float64(drop), float64(open)
	if info.Makespan > 0 {
		sec := float64(info.Makespan) / 1e6
		s.TokensPerSec = float64(c.outputTokens) / sec
		s.ResponsesPerSec = s.Completed / sec
	}
	var served []float64
	for cl := simcore.SLOClass(0); cl < simcore.NumSLOClasses; cl++ {
		cs, tokens := c.classSummary(cl)
		if cs.Count == 0 {
			continue
		}
		if target, ok := c.targets.TTFT.Get(cl); ok {
			a := c.attainment(cl, int64(target*1000)) / cs.Count
			cs.TTFTAttainment = &a
		}
		s.PerSLO[cl.Label()] = cs
		served = append(served, tokens/cs.Count)
	}
	if crit, shed := s.PerSLO["critical"], s.PerSLO["sheddable"]; crit.TTFT.P99 > 0 && shed.Count > 0 {
		s.SLOGap = shed.TTFT.P99 / crit.TTFT.P99
	}
	s.JainFairness = jain(served)
	c.goodput(&s, info.Makespan)
	return s
}

// classSummary also returns the output tokens its completed requests got.
func (c *Collector) classSummary(cl simcore.SLOClass) (ClassSummary, float64) {
	var cs ClassSummary
	for i, k := range c.class {
		if k != cl {
			continue
		}
		cs.Count++
		switch c.state[i] {
		case completed:
			cs.Completed++
		case rejected:
			cs.Rejected++
		}
	}
	if cs.Count > 0 {
		cs.TTFT = c.dist(&c.ttft, cl)
		cs.E2E = c.dist(&c.e2e, cl)
	}
	return cs, float64(c.served[cl])
}

// attainment counts the class's requests with a TTFT within limit µs.
func (c *Collector) attainment(cl simcore.SLOClass, limit int64) float64 {
	n := 0.0
	for i, k := range c.class {
		if v := c.ttft.get(i); k == cl && v != unset && v <= limit {
			n++
		}
	}
	return n
}

const allClasses = simcore.NumSLOClasses

// dist summarises the set values of col for class cl (or all classes).
func (c *Collector) dist(col *column, cl simcore.SLOClass) Dist {
	c.scratch = col.pick(c.scratch[:0], c.class, cl)
	return distOf(c.scratch)
}

// Mean averages summaries field by field (several seeds of one
// configuration). A class missing from some runs is averaged over the runs
// that have it.
func Mean(runs []Summary) Summary {
	var m Summary
	m.PerSLO = map[string]ClassSummary{}
	classRuns := map[string]float64{}
	targetRuns := 0.0 // runs with an overall attainment
	for _, r := range runs {
		m.Completed += r.Completed
		m.Rejected += r.Rejected
		m.Dropped += r.Dropped
		addDist(&m.TTFT, r.TTFT)
		addDist(&m.E2E, r.E2E)
		addDist(&m.ITL, r.ITL)
		addDist(&m.SchedulingDelay, r.SchedulingDelay)
		m.TokensPerSec += r.TokensPerSec
		m.ResponsesPerSec += r.ResponsesPerSec
		m.Preemptions += r.Preemptions
		m.CacheHitRate += r.CacheHitRate
		m.KV.OffloadedBlocks += r.KV.OffloadedBlocks
		m.KV.ReloadedBlocks += r.KV.ReloadedBlocks
		m.KV.TransferMs += r.KV.TransferMs
		m.KV.ThrashingRate += r.KV.ThrashingRate
		m.SLOGap += r.SLOGap
		m.JainFairness += r.JainFairness
		m.InFlight += r.InFlight
		m.MakespanMs += r.MakespanMs
		m.InputTokens += r.InputTokens
		m.OutputTokens += r.OutputTokens
		if r.Attainment != nil {
			m.Attainment = addOpt(m.Attainment, *r.Attainment)
			m.Goodput = addOpt(m.Goodput, *r.Goodput)
			targetRuns++
		}
		for k, c := range r.PerSLO {
			acc := m.PerSLO[k]
			acc.Count += c.Count
			acc.Completed += c.Completed
			acc.Rejected += c.Rejected
			addDist(&acc.TTFT, c.TTFT)
			addDist(&acc.E2E, c.E2E)
			if c.TTFTAttainment != nil {
				acc.TTFTAttainment = addOpt(acc.TTFTAttainment, *c.TTFTAttainment)
			}
			if c.Attainment != nil {
				acc.Attainment = addOpt(acc.Attainment, *c.Attainment)
				acc.Goodput = addOpt(acc.Goodput, *c.Goodput)
			}
			m.PerSLO[k] = acc
			classRuns[k]++
		}
	}
	n := float64(len(runs))
	if n == 0 {
		return m
	}
	for _, f := range []*float64{
		&m.Completed, &m.Rejected, &m.Dropped, &m.TokensPerSec, &m.ResponsesPerSec,
		&m.Preemptions, &m.CacheHitRate, &m.KV.OffloadedBlocks, &m.KV.ReloadedBlocks,
		&m.KV.TransferMs, &m.KV.ThrashingRate, &m.SLOGap, &m.JainFairness, &m.InFlight,
		&m.MakespanMs, &m.InputTokens, &m.OutputTokens,
	} {
		*f /= n
	}
	for _, d := range []*Dist{&m.TTFT, &m.E2E, &m.ITL, &m.SchedulingDelay} {
		scaleDist(d, 1/n)
	}
	if targetRuns > 0 {
		m.Attainment = scaleOpt(m.Attainment, 1/targetRuns)
		m.Goodput = scaleOpt(m.Goodput, 1/targetRuns)
	}
	for k, c := range m.PerSLO {
		inv := 1 / classRuns[k]
		c.Count *= inv
		c.Completed *= inv
		c.Rejected *= inv
		scaleDist(&c.TTFT, inv)
		scaleDist(&c.E2E, inv)
		c.TTFTAttainment = scaleOpt(c.TTFTAttainment, inv)
		c.Attainment = scaleOpt(c.Attainment, inv)
		c.Goodput = scaleOpt(c.Goodput, inv)
		m.PerSLO[k] = c
	}
	return m
}

// addOpt adds v to an optional sum (nil: none yet); the result is a new
// pointer, so summaries never share one.
func addOpt(acc *float64, v float64) *float64 {
	if acc != nil {
		v += *acc
	}
	return &v
}

// scaleOpt multiplies an optional value, keeping nil.
func scaleOpt(p *float64, f float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p * f
	return &v
}

func addDist(acc *Dist, d Dist) {
	acc.Mean += d.Mean
	acc.P50 += d.P50
	acc.P90 += d.P90
	acc.P99 += d.P99
}

func scaleDist(d *Dist, f float64) {
	d.Mean *= f
	d.P50 *= f
	d.P90 *= f
	d.P99 *= f
}
