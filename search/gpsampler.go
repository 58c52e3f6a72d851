package search

import (
	"math"
	"math/rand"
	"slices"
	"sort"
)

// The gp sampler: after the startup trials (startup.go), each proposal
// maximises the expected improvement of a Gaussian process (gp.go) fitted
// to the history TPE would model (the same bound on its length, the same
// ranking score; trials still running are believed at the process's own
// prediction, see below). Where TPE
// learns only which trials were among the best, the process learns how
// the score moves along each parameter, and so points to the end of a
// range the best trials lean towards before any trial has been there. The
// acquisition is maximised over gpRandomCandidates uniform vectors and
// gpMutations mutations of each of the gpTopPoints best trials, then by
// coordinate moves from the gpClimbs best of those.
//
// A proposal costs O(n³) in the n trials modelled (at most gpHistory):
// a few tenths of a second at 100 trials, against TPE's
// milliseconds — nothing beside a simulation of a cluster, or a real one.
//
// Measured on joint-slo, 100 trials, sampler seeds 1-10 (BENCHMARKS.md,
// "Samplers against Optuna"): median best 0.257 / 0.240 / 0.230 of the
// baseline's critical TTFT P99 after 25 / 50 / 100 trials, and 0.27 in
// 20 trials, against Optuna 3.1's TPE's 0.295 / 0.259 / 0.243 and 35.5
// trials and ours' 0.280 / 0.261 / 0.250 and 34.5; Optuna's 100-trial
// median reached in 42 trials; the interquartile range between seeds
// after 50 trials 0.011 against Optuna's 0.015 (over seeds 1-80, 0.015
// against 0.021). On seeds 11-20: 0.253 / 0.241 / 0.230 and 13 trials,
// against Optuna's 0.279 / 0.265 / 0.254 and 39.
const (
	// gpHistory bounds the trials the process models: the historyBest
	// best and the newest others, as TPE's history but 100 in all, not
	// 175. A fit costs O(n³) per step of its optimiser: at 175 trials a
	// proposal took seconds, and a 200-trial study on four workers spent
	// most of its time proposing. Studies of up to 100 trials (every
	// measurement above) model their whole history and are unchanged.
	gpHistory          = 100
	gpRandomCandidates = 512
	gpTopPoints        = 5
	gpMutations        = 64
	gpClimbs           = 3
	gpClimbRounds      = 15
)

// gpPriorMean is where the process's mean returns far from every trial,
// in standard deviations of the targets above their mean: a point no
// trial is near is taken for a worse than average one, not an average
// one. Normal-score targets put even the worst trial only about two
// deviations above the mean, so at 0 a box's far edges, where the
// deviation is whole, drew the expected improvement away from the best
// trials: on a smooth 5-D bowl nine of trials 15-24 put two or more
// coordinates at an edge. Measured (3 climbs): the bowl's median best
// after 25 trials over sampler seeds 1-30, prior mean 0 4.87, 0.5 4.49,
// 1 1.63, 1.5 2.06, 2 1.84 (TPE 5.39); joint-slo, sampler seeds 1-80,
// the share of studies at or below 0.27 of the baseline's critical TTFT
// P99 by trial 20 / 25 / 30, at 0 0.45 / 0.61 / 0.70, at 1 0.57 / 0.78
// / 0.86, at 2 0.56 / 0.64 / 0.75.
const gpPriorMean = 1.0

// gpStallTrials and gpStallKappa: once gpStallTrials of the study's own
// complete trials have followed its best without beating it, the next
// proposal minimises the lower confidence bound mean −
// gpStallKappa·deviation instead of maximising the expected improvement,
// until a trial beats the best. On a plateau the expected improvement
// keeps proposing small variations of the best trials: joint-slo's
// sampler seed 4 found 0.297
// of the baseline's critical TTFT P99 at trial 11, and 52 of its next 88
// trials scored exactly that, every one with the token budget at its top
// (2048), their critical base priority at a median 9.9 (3 of 52 at 18 or
// more). The bound values what the process does not know linearly, not
// by its chance of beating the best: 14 of the 25 stalled proposals put
// the critical base priority at 18-20 (still 0.297), and from there a
// lower budget paid (0.266 after 50 trials, 0.243 after 60). Measured
// on joint-slo (one worker, sampler seeds 1-80, best after 50 trials):
// studies above 0.27 of the baseline's 4 → 1, the worst 0.307 → 0.280,
// the median 0.242 → 0.243, the interquartile range 0.016 → 0.015
// (Optuna's TPE 0.021).
const (
	gpStallTrials = 10
	gpStallKappa  = 2.0
)

// stalled reports whether gpStallTrials of the study's own complete
// trials (in trial order) have followed its lowest-scored one. A warm
// start's trials are not the study's progress: counted, the earlier
// study's best would stand before the first proposal, and a study that
// cannot beat it on its own scale (toQuantiles) would stay stalled.
func stalled(complete []scored) bool {
	bestAt, n := -1, 0
	best := math.Inf(1)
	for _, h := range complete {
		if h.warm {
			continue
		}
		if h.score < best {
			best, bestAt = h.score, n
		}
		n++
	}
	return bestAt >= 0 && n-1-bestAt >= gpStallTrials
}

// streamGP draws the gp sampler's candidates.
const streamGP uint64 = 7

// features maps a vector (value space: numbers, categorical indices, NaN
// where inactive) to the GP's features.
func (s *Sampler) features(values []float64) []float64 {
	z := make([]float64, len(s.space))
	for i, p := range s.space {
		switch {
		case math.IsNaN(values[i]) && p.Kind == Categorical:
			z[i] = gpInactiveCat
		case math.IsNaN(values[i]):
			z[i] = gpInactiveNum
		case p.Kind == Categorical:
			z[i] = values[i]
		default:
			lo, hi := p.internalBounds()
			if hi > lo {
				z[i] = (p.toInternal(values[i]) - lo) / (hi - lo)
			}
		}
	}
	return z
}

// valuesOf is a history entry's vector in value space.
func (s *Sampler) valuesOf(params map[string]float64) []float64 {
	v := make([]float64, len(s.space))
	for i, p := range s.space {
		x, ok := params[p.Name]
		switch {
		case !ok:
			v[i] = math.NaN()
		case p.Kind == Categorical:
			v[i] = x
		default:
			v[i] = p.fromInternal(x)
		}
	}
	return v
}

// gpTargets are the scores' normal scores: Φ⁻¹((rank + ½)/n), equal
// scores sharing their mean rank, standardised. Only the order of the
// scores reaches the process, not their sizes: a score's constraint
// penalty (10 × the shortfall, SamplerScore) can be many times the
// primary ratio, and on a log scale such trials still stretched the
// process over the infeasible corner while flattening the differences
// between the feasible trials it must tell apart. Measured on joint-slo
// (sampler seeds 1-10, median best after 25 / 50 / 100 trials, the
// length-scale prior at rate 0.5): log scores 0.280 / 0.265 / 0.236,
// normal scores 0.270 / 0.245 / 0.233.
func gpTargets(scores []float64) []float64 {
	n := len(scores)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] < scores[order[b]] })
	y := make([]float64, n)
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && scores[order[hi]] == scores[order[lo]] {
			hi++
		}
		rank := float64(lo+hi-1) / 2 // the mean rank of a tie
		for _, i := range order[lo:hi] {
			y[i] = normQuantile((rank + 0.5) / float64(n))
		}
		lo = hi
	}
	standardize(y)
	return y
}

// standardize rescales y in place to mean 0 and standard deviation 1 (1
// when every value is the same) and returns the mean and deviation used.
func standardize(y []float64) (mean, sd float64) {
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	for _, v := range y {
		sd += (v - mean) * (v - mean)
	}
	sd = math.Sqrt(sd / float64(len(y)))
	if sd == 0 {
		sd = 1
	}
	for i := range y {
		y[i] = (y[i] - mean) / sd
	}
	return mean, sd
}

// normQuantile is Φ⁻¹(p).
func normQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// proposeGP returns trial number's proposal (value space) from history.
func (s *Sampler) proposeGP(number, attempt int, history []scored) []float64 {
	rng := newTrialRand(s.seed, number, redrawStream(streamGP, attempt))
	cat := make([]bool, len(s.space))
	for i, p := range s.space {
		cat[i] = p.Kind == Categorical
	}
	// Pending trials (other workers' proposals) are not scored by the
	// liar here, whose worst score would paint the neighbourhood of the
	// best trial, where proposals cluster, as bad: the process believes
	// its own prediction there (the Kriging believer), which keeps the
	// mean and removes the uncertainty, so that the expected improvement
	// of a point being run falls to nothing and the next proposal goes
	// elsewhere.
	var complete []scored
	var pending [][]float64 // value space
	for _, h := range history {
		if h.pending {
			pending = append(pending, s.valuesOf(h.params))
		} else {
			complete = append(complete, h)
		}
	}
	stall := stalled(complete)
	history = bounded(complete, gpHistory-historyBest)
	values := make([][]float64, len(history))
	scores := make([]float64, len(history))
	for i, h := range history {
		values[i] = s.valuesOf(h.params)
		scores[i] = h.score
	}
	var acq func([]float64) float64
	if s.knowsRatios(history) {
		acq = s.knownRatioAcq(scores, values, pending, cat)
	} else {
		acq = s.scoreAcq(scores, values, pending, cat, stall)
	}

	type cand struct {
		v   []float64
		acq float64
	}
	var cands []cand
	add := func(v []float64) { cands = append(cands, cand{v, acq(v)}) }
	for range gpRandomCandidates {
		add(drawUniformVector(s.space, rng))
	}
	order := make([]int, len(history))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] < scores[order[b]] })
	for _, i := range order[:min(gpTopPoints, len(order))] {
		base := s.valuesOf(history[i].params)
		for range gpMutations {
			add(s.mutate(base, rng))
		}
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].acq > cands[b].acq })
	top := cands[0]
	for c := range min(gpClimbs, len(cands)) {
		v, a := cands[c].v, cands[c].acq
		for range gpClimbRounds {
			improved := false
			for _, n := range s.neighbours(v, rng) {
				if na := acq(n); na > a {
					v, a, improved = n, na, true
				}
			}
			if !improved {
				break
			}
		}
		if a > top.acq {
			top = cand{v, a}
		}
	}
	return top.v
}

// mutate changes each active parameter of base with probability
// max(1/active, 0.15): a numeric one by a Gaussian step of a tenth of its
// range, a categorical one to another choice; parameters a change
// switches on are drawn uniformly.
func (s *Sampler) mutate(base []float64, rng *rand.Rand) []float64 {
	active := 0
	for i, p := range s.space {
		if !math.IsNaN(base[i]) && !p.single() {
			active++
		}
	}
	pm := math.Max(1/float64(max(active, 1)), 0.15)
	v := make([]float64, len(s.space))
	for i, p := range s.space {
		if p.When != nil && !s.space[:i+1].Active(s.space.values(v[:i+1]))[i] {
			v[i] = math.NaN()
			continue
		}
		if math.IsNaN(base[i]) {
			v[i] = p.drawUniform(rng)
			continue
		}
		v[i] = base[i]
		if p.single() || rng.Float64() >= pm {
			continue
		}
		if p.Kind == Categorical {
			k := len(p.Choices)
			v[i] = float64((int(base[i]) + 1 + rng.Intn(k-1)) % k)
			continue
		}
		lo, hi := p.internalBounds()
		x := p.toInternal(base[i]) + 0.1*(hi-lo+1)*rng.NormFloat64()
		v[i] = p.fromInternal(math.Min(math.Max(math.Round(x), lo), hi))
	}
	return v
}

// neighbours are v with one parameter moved: a numeric one by ±1 %, ±5 %
// or ±20 % of its range (at least one step), a categorical one to each
// other choice (parameters it switches on drawn uniformly).
func (s *Sampler) neighbours(v []float64, rng *rand.Rand) [][]float64 {
	var out [][]float64
	for i, p := range s.space {
		if math.IsNaN(v[i]) || p.single() {
			continue
		}
		if p.Kind == Categorical {
			for c := range p.Choices {
				if float64(c) != v[i] {
					out = append(out, s.withValue(v, i, float64(c), rng))
				}
			}
			continue
		}
		lo, hi := p.internalBounds()
		x := p.toInternal(v[i])
		for _, f := range []float64{0.01, 0.05, 0.2} {
			step := math.Max(1, math.Round(f*(hi-lo)))
			for _, nx := range []float64{x - step, x + step} {
				if nx >= lo && nx <= hi {
					out = append(out, s.withValue(v, i, p.fromInternal(nx), rng))
				}
			}
		}
	}
	return out
}

// withValue is v with parameter i set to x and the conditions re-applied.
func (s *Sampler) withValue(v []float64, i int, x float64, rng *rand.Rand) []float64 {
	n := slices.Clone(v)
	n[i] = x
	active := s.space.Active(s.space.values(n))
	for j, p := range s.space {
		switch {
		case !active[j]:
			n[j] = math.NaN()
		case math.IsNaN(n[j]):
			n[j] = p.drawUniform(rng)
			active = s.space.Active(s.space.values(n))
		}
	}
	return n
}

// scoreAcq is the acquisition on the ranking score itself: the expected
// improvement of the process fitted to its normal scores (gpTargets)
// below the best trial's, with the process's mean away from every trial
// gpPriorMean above the trials' mean; when the search has stalled, the
// lower confidence bound (gpStallKappa).
func (s *Sampler) scoreAcq(scores []float64, values, pending [][]float64, cat []bool, stall bool) func([]float64) float64 {
	y := gpTargets(scores)
	aboveMean(y)
	m := fitGP(s.featureRows(values), y, cat).believe(y, s.featureRows(pending))
	if stall {
		return func(v []float64) float64 {
			mean, sd := m.predict(s.features(v))
			return gpStallKappa*sd - mean
		}
	}
	best := slices.Min(y)
	return func(v []float64) float64 {
		mean, sd := m.predict(s.features(v))
		return logEI(mean, sd, best)
	}
}

// aboveMean moves standardised targets down by gpPriorMean in place, so
// that a process fitted to them (whose own mean is 0) returns, away from
// every trial, to gpPriorMean deviations above their mean.
func aboveMean(y []float64) {
	for i := range y {
		y[i] -= gpPriorMean
	}
}

// featureRows maps value-space vectors to the process's features.
func (s *Sampler) featureRows(values [][]float64) [][]float64 {
	out := make([][]float64, len(values))
	for i, v := range values {
		out[i] = s.features(v)
	}
	return out
}

// knowsRatios reports whether the study's primary ratio is known before a
// run (Options.KnownRatio answers for its trials: a cost, which the
// configuration decides; a latency it never does) in a cold study.
func (s *Sampler) knowsRatios(history []scored) bool {
	if s.opts.KnownRatio == nil || s.opts.Warm || len(history) == 0 {
		return false
	}
	_, ok := s.opts.KnownRatio(s.space.values(s.valuesOf(history[0].params)))
	return ok
}

// gpPenaltyScale: the known-cost acquisition's process models a trial's
// penalty p as log(1 + p/gpPenaltyScale), 0 exactly when the trial is
// feasible, so the chance of meeting the constraints is that of a value
// at most 0 on either scale. On the penalty itself (a sampler score's 10 ×
// the shortfall) the process spent its range on clusters that miss by
// far (penalties near 34 on capacity-joint) and could not tell 0.1 from
// 0.3, the clusters just short of the SLOs where the answer is: it moved
// a 20.48 USD/h cluster's prefill chunk by 5-10 tokens a trial. 0.1 is a
// shortfall of one percentage point. Measured on capacity-joint (15
// trials, within 5 % of the grid's cheapest cluster, sampler seeds 1-10
// / 11-20): the penalty itself 9 / 9, scale 1 10 / 7, scale 0.1 10 / 10.
const gpPenaltyScale = 0.1

// knownRatioAcq is the acquisition when a point's primary ratio is known
// before it runs (Options.KnownRatio: a cost). A run then adds only the
// score's penalty (score − ratio, 0 when the trial is feasible), which
// the process models, and the acquisition is the constrained expected
// improvement: the known ratio's gain on the cheapest feasible trial
// times the probability that the penalty is at most 0 (before any trial
// is feasible, that probability alone), the process modelling the penalty
// on a log scale (gpPenaltyScale). (A warm start's scores are
// quantiles, not ratios: it keeps the plain model.) KnownRatio knows
// every point or none of a study's, as the primary objective is a cost
// or not.
//
// The incumbent is the cheapest feasible trial, not the best score: a
// cluster just short of the SLOs scores barely above its ratio, so the
// expected improvement on the score valued making it feasible at almost
// nothing and a cheaper cluster far from them at its whole saving. The
// penalty's process sees the known ratio as one feature more
// (ratioAxis): whether a cluster meets its SLOs follows its capacity,
// which its cost measures across GPUs, counts and TPs, where the
// per-GPU instance counts are separate parameters that each of a few
// trials informs alone. Its mean away from every trial is gpPriorMean
// above the trials' (aboveMean), as the score's is. Measured on
// capacity-joint (15 trials, the cheapest feasible cluster within 5 % of
// the grid's, sampler seeds 1-10 / 11-20): the expected improvement of
// ratio + penalty below the best score, 8 / 7, and 10 / 6 with the ratio
// feature and the prior mean (on 1-10 the prior mean alone 7, the
// feature alone 9); the constrained improvement with both 9 / 9 on the
// penalty itself (its misses stop at 25.60 USD/h, tuning a 20.48 USD/h
// cluster's strategy when the trials run out), without the prior mean
// 7 / 7, on the log scale 10 / 10; tpe 9 / 5.
func (s *Sampler) knownRatioAcq(scores []float64, values, pending [][]float64, cat []bool) func([]float64) float64 {
	ratio := func(v []float64) float64 {
		r, ok := s.opts.KnownRatio(s.space.values(v))
		if !ok {
			return 0
		}
		return math.Min(r, RatioCap)
	}
	ratios := make([]float64, len(values))
	pen := make([]float64, len(values))
	incumbent := math.Inf(1) // the cheapest feasible trial's ratio
	for i, v := range values {
		ratios[i] = ratio(v)
		pen[i] = math.Max(scores[i]-ratios[i], 0)
		if Feasible(pen[i] / samplerViolationWeight) {
			incumbent = math.Min(incumbent, ratios[i])
		}
	}
	axis := newRatioAxis(ratios)
	rows := func(vs [][]float64) [][]float64 {
		out := make([][]float64, len(vs))
		for i, v := range vs {
			out[i] = append(s.features(v), axis.at(ratio(v)))
		}
		return out
	}
	for i := range pen {
		pen[i] = math.Log1p(pen[i] / gpPenaltyScale)
	}
	mean, sd := standardize(pen)
	aboveMean(pen)
	mean += gpPriorMean * sd
	m := fitGP(rows(values), pen, append(slices.Clone(cat), false)).believe(pen, rows(pending))
	return func(v []float64) float64 {
		r := ratio(v)
		mu, sigma := m.predict(append(s.features(v), axis.at(r)))
		feasible := logNormCDF(-(mean + sd*mu) / (sd * sigma))
		switch {
		case math.IsInf(incumbent, 1):
			return feasible
		case r >= incumbent:
			return math.Inf(-1)
		}
		return math.Log(incumbent-r) + feasible
	}
}

// logNormCDF is log Φ(z), finite far into the lower tail (Φ(z) ≈ φ(z)/|z|
// there).
func logNormCDF(z float64) float64 {
	if z > -6 {
		return math.Log(normCDF(z))
	}
	return -0.5*z*z - math.Log(-z) - 0.5*math.Log(2*math.Pi)
}

// ratioAxis places a known ratio on the penalty process's extra feature:
// its log, scaled so that the modelled trials span 0 to 1 (a cost twice
// another's is as far from it at any price).
type ratioAxis struct{ lo, span float64 }

func newRatioAxis(ratios []float64) ratioAxis {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range ratios {
		l := logRatio(r)
		lo, hi = math.Min(lo, l), math.Max(hi, l)
	}
	if !(hi > lo) {
		return ratioAxis{lo, 1}
	}
	return ratioAxis{lo, hi - lo}
}

func (a ratioAxis) at(r float64) float64 { return (logRatio(r) - a.lo) / a.span }

// logRatio is a known ratio's log (a ratio is a cost's share of the
// baseline's, above 0; the floor keeps a degenerate one finite).
func logRatio(r float64) float64 { return math.Log(math.Max(r, 1e-9)) }
