package metrics

import "optimize/simcore"

// Summary is one run's result; its JSON form is `simulate --output json`.
type Summary struct {
	Completed       float64 `json:"completed" unit:"requests"`
	Rejected        float64 `json:"rejected" unit:"requests"`
	Dropped         float64 `json:"dropped" unit:"requests"`
	TTFT            Dist    `json:"ttft_ms" unit:"ms"`
	E2E             Dist    `json:"e2e_ms" unit:"ms"`
	ITL             Dist    `json:"itl_ms" unit:"ms"`
	SchedulingDelay Dist    `json:"scheduling_delay_ms" unit:"ms"`
	TokensPerSec    float64 `json:"tokens_per_sec" unit:"tokens/s"`
	ResponsesPerSec float64 `json:"responses_per_sec" unit:"req/s"`
	Preemptions     float64 `json:"preemptions" unit:"preemptions"`
	// CacheHitRate is BLIS's: the unweighted mean over instances of each
	// one's prefix-cache hits over its blocks stored, an instance that
	// served nothing counting 0.
	CacheHitRate float64 `json:"cache_hit_rate" unit:"fraction"`
	// RoutingImbalance is the most requests routed to one instance over
	// the mean per instance: 1 when the router spread them evenly, the
	// instance count when it sent all to one. Production has no such
	// gauge, but it follows from vLLM's per-pod request counters
	// (vllm:request_success_total) or llm-d's routing decisions.
	RoutingImbalance float64                 `json:"routing_imbalance" unit:"ratio"`
	KV               KVSummary               `json:"kv"`
	PerSLO           map[string]ClassSummary `json:"per_slo"`
	SLOGap           float64                 `json:"slo_gap" unit:"ratio"`
	JainFairness     float64                 `json:"jain_fairness" unit:"index"`
	// Attainment and Goodput are over the classes with a latency target
	// (see Targets): the fraction of their arrived requests that met their
	// class's targets, and those requests per second of makespan. Absent
	// when no class that sent requests has a target.
	Attainment   *float64 `json:"attainment,omitempty" unit:"fraction"`
	Goodput      *float64 `json:"goodput,omitempty" unit:"req/s"`
	InFlight     float64  `json:"in_flight,omitempty" unit:"requests"`
	MakespanMs   float64  `json:"makespan_ms" unit:"ms"`
	InputTokens  float64  `json:"input_tokens" unit:"tokens"`
	OutputTokens float64  `json:"output_tokens" unit:"tokens"`
	// GPUCount and CostPerHour are the cluster's, not the run's: the GPUs
	// serving (instances × TP) and what they cost per hour at the run's
	// GPU's price per GPU-hour (USD; cost has no vLLM or llm-d
	// counterpart). Every run of a configuration has the same, so Mean
	// keeps them (mean:"same") rather than averaging. CostPerHour is
	// absent when the GPU has no price, both are absent from results
	// stored before they were recorded.
	//
	// With an autoscaler the GPUs change over the run: GPUCount is their
	// mean over the run (GPUHours / the run's hours), CostPerHour its
	// price, and Mean averages them over runs that differ.
	GPUCount    *float64 `json:"gpu_count,omitempty" unit:"GPUs" mean:"same"`
	CostPerHour *float64 `json:"cost_per_hour,omitempty" unit:"USD/h" mean:"same"`
	// GPUHours is Σ over instances of their GPUs × the hours from their
	// placement to their termination or the end of the run, and CostUSD
	// its price: present with an autoscaler.
	GPUHours *float64 `json:"gpu_hours,omitempty" unit:"GPU-h"`
	CostUSD  *float64 `json:"cost_usd,omitempty" unit:"USD"`
	// A replayed trace's rows that cannot be served, skipped and counted
	// here (never requests of the run): no output tokens (a failed
	// request), no prompt tokens, or longer than the model's context
	// window (the input fills it or input + output exceeds it). Absent
	// for generated workloads.
	TraceZeroOutput  *float64 `json:"trace_zero_output,omitempty" unit:"requests"`
	TraceZeroInput   *float64 `json:"trace_zero_input,omitempty" unit:"requests"`
	TraceOverContext *float64 `json:"trace_over_context,omitempty" unit:"requests"`
	// PD is a prefill/decode disaggregated run's own figures (absent
	// otherwise).
	PD PDSummary `json:"pd,omitzero"`
	// Flow control's gateway queue, absent without it.
	GatewayNumbers
	// Autoscaler is what the autoscaler did, absent without one: a report
	// (series and lists), not metrics, so objectives do not read it.
	Autoscaler *ScaleSummary `json:"autoscaler,omitempty" metric:"-"`
}

// KVSummary reports the CPU offload tier's activity.
type KVSummary struct {
	OffloadedBlocks float64 `json:"offloaded_blocks" unit:"blocks"`
	ReloadedBlocks  float64 `json:"reloaded_blocks" unit:"blocks"`
	TransferMs      float64 `json:"transfer_ms" unit:"ms"`
	ThrashingRate   float64 `json:"thrashing_rate" unit:"fraction"`
}

// ClassSummary is the per-SLO-class part of a Summary.
type ClassSummary struct {
	Count     float64 `json:"count" unit:"requests"`
	Completed float64 `json:"completed" unit:"requests"`
	Rejected  float64 `json:"rejected" unit:"requests"`
	TTFT      Dist    `json:"ttft_ms" unit:"ms"`
	E2E       Dist    `json:"e2e_ms" unit:"ms"`
	// TTFTAttainment is the fraction of the class's requests whose first
	// token came within its TTFT target (slo.ttft_target_ms.<class>): requests still in flight at
	// the end count if they had their first token in time; rejected,
	// dropped and never-prefilled ones miss it. Absent without a target.
	TTFTAttainment *float64 `json:"ttft_attainment,omitempty" unit:"fraction"`
	// Attainment is the fraction of the class's requests that completed
	// within every target the class has (TTFT, mean ITL, E2E; see
	// Targets): rejected, dropped and unfinished requests miss, so
	// shedding cannot raise it. Goodput is those requests per second of
	// makespan. Both absent without a target.
	Attainment *float64 `json:"attainment,omitempty" unit:"fraction"`
	Goodput    *float64 `json:"goodput,omitempty" unit:"req/s"`
	// Flow control's gateway queue, absent without it.
	GatewayNumbers
}

// RunInfo is what the engine knows beyond per-request outcomes.
type RunInfo struct {
	Makespan     simcore.Tick // max over instances of the last event, from t = 0
	CacheHitRate float64      // unweighted mean over instances
	// RoutingImbalance: the most requests routed to one instance over
	// the mean per instance (Summary.RoutingImbalance).
	RoutingImbalance float64
	KV               KVSummary
	// GPUs serving and their price in USD per GPU-hour (0: no price).
	GPUs            int
	PricePerGPUHour float64
	// PD is a prefill/decode disaggregated run's counts; nil otherwise.
	PD *PDCounts
	// GPUHours and RunHours, when RunHours > 0 (an autoscaler ran): the
	// GPU-hours used and the run's length; the cost follows them.
	GPUHours, RunHours float64
}

// Summarize computes the summary.
func (c *Collector) Summarize(info RunInfo) Summary {
	s := Summary{
		TTFT:             c.dist(&c.ttft, allClasses),
		E2E:              c.dist(&c.e2e, allClasses),
		SchedulingDelay:  c.dist(&c.sched, allClasses),
		ITL:              weightedDist(c.itl),
		Preemptions:      float64(c.preemptions),
		CacheHitRate:     info.CacheHitRate,
		KV:               info.KV,
		RoutingImbalance: info.RoutingImbalance,
		PerSLO:           map[string]ClassSummary{},
		InputTokens:      float64(c.inputTokens),
		OutputTokens:     float64(c.outputTokens),
		MakespanMs:       float64(info.Makespan) / 1000,
	}
	if info.PD != nil {
		s.PD = pdSummary(info.PD, info.Makespan)
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
	s.GPUCount, s.CostPerHour = info.ClusterCost()
	s.GatewayNumbers = c.gatewayNumbers(allClasses)
	if info.RunHours > 0 {
		hours, mean := info.GPUHours, info.GPUHours/info.RunHours
		s.GPUHours, s.GPUCount, s.CostPerHour = &hours, &mean, nil
		if info.PricePerGPUHour > 0 {
			cost, perHour := hours*info.PricePerGPUHour, mean*info.PricePerGPUHour
			s.CostUSD, s.CostPerHour = &cost, &perHour
		}
	}
	return s
}

// ClusterCost is the cluster's gpu_count and cost_per_hour (GPUs × the
// price per GPU-hour); nil without GPUs, and the cost nil without a
// price. A configuration decides both before it runs, so a sampler may
// read them off RunInfo{GPUs, PricePerGPUHour} without a run.
func (info RunInfo) ClusterCost() (gpuCount, costPerHour *float64) {
	if info.GPUs <= 0 {
		return nil, nil
	}
	gpus := float64(info.GPUs)
	if info.PricePerGPUHour <= 0 {
		return &gpus, nil
	}
	cost := gpus * info.PricePerGPUHour
	return &gpus, &cost
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
		cs.GatewayNumbers = c.gatewayNumbers(cl)
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

// Mean averages summaries number by number (several seeds of one
// configuration; the numbers are SummaryNumbers and, per class,
// ClassNumbers). A class missing from some runs is averaged over the runs
// that have it, an optional number (attainment, goodput) over the runs
// that have it. A number of the configuration rather than the run (Same:
// gpu_count, cost_per_hour) is the first run's that has it, exactly: a
// sum of three equal floats divided by 3 can miss the value by an ulp.
func Mean(runs []Summary) Summary {
	var m Summary
	m.PerSLO = map[string]ClassSummary{}
	tops := summaryNumbers()
	have := make([]float64, len(tops)) // runs with each optional number
	classRuns := map[string]float64{}
	for i := range runs {
		addNumbers(&m, &runs[i], tops, have)
		for k, c := range runs[i].PerSLO {
			acc := m.PerSLO[k]
			addNumbers(&acc, &c, classNumbers(), nil)
			m.PerSLO[k] = acc
			classRuns[k]++
		}
	}
	n := float64(len(runs))
	if n == 0 {
		return m
	}
	// The divisions are written as they always were (a scalar divided by
	// n, a distribution and an optional number multiplied by the
	// reciprocal), so that means stay bit-identical.
	for j, num := range tops {
		v, ok := num.Get(&m)
		switch {
		case !ok, num.Same:
		case num.Optional:
			num.set(&m, v*(1/have[j]))
		case num.Dist != "":
			num.set(&m, v*(1/n))
		default:
			num.set(&m, v/n)
		}
	}
	// A number of the configuration that differs between runs (the mean
	// GPUs of an autoscaled run) is averaged.
	for _, num := range tops {
		if !num.Same {
			continue
		}
		first, ok := num.Get(&runs[0])
		for i := 1; ok && i < len(runs); i++ {
			if v, has := num.Get(&runs[i]); !has || v != first {
				sum := 0.0
				for j := range runs {
					v, _ := num.Get(&runs[j])
					sum += v
				}
				num.set(&m, sum/n)
				break
			}
		}
	}
	for k, c := range m.PerSLO {
		inv := 1 / classRuns[k]
		for _, num := range classNumbers() {
			if v, ok := num.Get(&c); ok {
				num.set(&c, v*inv)
			}
		}
		m.PerSLO[k] = c
	}
	return m
}

// addNumbers adds r's numbers into acc; an optional number counts in have
// (when not nil) for the runs that have it.
func addNumbers[T any](acc, r *T, numbers []Number[T], have []float64) {
	for j, num := range numbers {
		v, ok := num.Get(r)
		if !ok {
			continue
		}
		sum, had := num.Get(acc)
		switch {
		case !num.Same:
			num.set(acc, sum+v)
		case !had:
			num.set(acc, v)
		}
		if num.Optional && have != nil {
			have[j]++
		}
	}
}
