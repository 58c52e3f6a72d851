package latency

import "optimize/simcore/keys"

// The trained-physics model (BLIS f90a1e3a's default) prices a step with
// roofline basis terms of the model on the GPU, each times a learned
// correction β, plus fixed overheads:
//
//	T = β1a·T_pf_compute + β1b·T_pf_kv + β2a·T_dc_compute + β2b·T_dc_kv
//	  + β3·T_weight + β4·T_allreduce + β5·layers + β6·requests + β7
//	  + β8·(MoE layers, interleaved models only)
//
// with, for one instance of TP GPUs (no data or expert parallelism, so
// BLIS's MoE dispatch term β_EP is zero), d = hidden, d_kv = KV heads ×
// head width, h = heads / TP, L = layers, FLOPs at the GPU's dense peak
// (FP8's for FP8 weights) and bytes at its HBM bandwidth:
//
//	T_pf_compute = [L·2·P·d·(2d + 2d_kv)/TP + L·Σ 4·h·t·(s + t/2)·d_head + FFN(P)] / peak
//	T_pf_kv      = L·2·(d_kv/TP)·P·2 bytes / bw
//	T_dc_compute = [L·2·D·d·(2d + 2d_kv)/TP + L·4·h·C·d_head + FFN(D)] / peak
//	T_dc_kv      = L·2·(d_kv/TP)·2 bytes·(C + D) / bw
//	T_weight     = [L·d·(2d + 2d_kv)/TP + MoE layers·(experts/TP)·3·d·f_moe
//	               + (MoE layers·3·d·f_shared + dense layers·3·d·f_dense)/TP]·weight bytes / bw
//	T_allreduce  = (L + dense layers + MoE layers if TP > 1)·N·d·2 bytes·2·(TP−1)/TP / bw
//
// where P = prefill tokens this step (t per chunk, s its prompt length), D
// the decoding requests, C the sum of their contexts, N = P + D, and
// FFN(n) = MoE layers·(n·k/TP)·6·d·f_moe + MoE layers·n·6·d·f_shared/TP
// + dense layers·n·6·d·f_dense/TP for k experts per token. α0 is the
// queueing delay of every request, α1 the post-decode overhead added once
// to E2E, α2 the per-output-token overhead. vLLM has no such formula: it is
// BLIS's fit of vLLM's step times (6.7 % median E2E error on its held-out
// runs).

// Physics are the trained-physics coefficients: α in µs; β1a…β4 and
// β1b, β2b dimensionless corrections, β5 µs per layer, β6 µs per request,
// β7 µs per step, β8 µs per MoE layer, β_EP the dispatch correction, in
// BLIS's order [β1a, β2a, β3, β4, β5, β6, β7, β8, β1b, β2b, β_EP].
type Physics struct {
	Alpha [3]float64
	Beta  [11]float64
}

// PhysicsBetaNames name the β coefficients in BLIS's order, as the
// settings latency.physics.beta.<name> and --physics-beta-coeffs take them.
var PhysicsBetaNames = [11]string{"1a", "2a", "3", "4", "5", "6", "7", "8", "1b", "2b", "ep"}

// PhysicsOverrides are trained-physics coefficients given by hand (or
// fitted to a deployment's runs: optimize calibrate --fit), each over
// the world data's.
type PhysicsOverrides struct {
	Alpha    [3]float64
	Beta     [11]float64
	AlphaSet [3]bool
	BetaSet  [11]bool
}

// Apply returns p with the overridden coefficients replaced.
func (o PhysicsOverrides) Apply(p Physics) Physics {
	for i := range p.Alpha {
		if o.AlphaSet[i] {
			p.Alpha[i] = o.Alpha[i]
		}
	}
	for i := range p.Beta {
		if o.BetaSet[i] {
			p.Beta[i] = o.Beta[i]
		}
	}
	return p
}

// TrainedPhysics evaluates the trained-physics formula for one model on
// one GPU at one TP.
type TrainedPhysics struct {
	alpha [3]int64
	beta  [11]float64

	layers, moeLayers, denseLayers float64
	hidden, dKV, dHead, tp, kEff   float64
	headsPerGPU                    float64
	experts                        float64
	ffnMoE, ffnDense, ffnShared    float64
	weightBPP, activationBPP       float64
	interleaved, moe               bool
	flopsPerUs, bytesPerUs         float64
}

// kvBytes is the width of a KV cache element: vLLM stores KV in the
// compute dtype (FP16/BF16) whatever the weights' quantisation.
const kvBytes = 2.0

// NewTrainedPhysics checks the inputs and precomputes what does not change
// from step to step.
func NewTrainedPhysics(p Physics, a Arch, h Hardware, tp int) (*TrainedPhysics, error) {
	if err := finite(keys.PhysicsAlpha, p.Alpha[:]); err != nil {
		return nil, err
	}
	if err := finite(keys.PhysicsBeta, p.Beta[:]); err != nil {
		return nil, err
	}
	if err := checkWorld(a, h, tp); err != nil {
		return nil, err
	}
	moeLayers, denseLayers := a.layerSplit()
	fMoE, fDense := a.ffnWidths()
	headDim := a.Hidden / a.Heads // integer division, as the formula's d_head
	m := &TrainedPhysics{
		beta:          p.Beta,
		layers:        float64(a.Layers),
		moeLayers:     float64(moeLayers),
		denseLayers:   float64(denseLayers),
		hidden:        float64(a.Hidden),
		dKV:           float64(a.kvHeads() * headDim),
		dHead:         float64(headDim),
		tp:            float64(tp),
		kEff:          float64(max(1, a.ExpertsPerToken)),
		headsPerGPU:   float64(a.Heads) / float64(tp),
		experts:       float64(a.Experts),
		ffnMoE:        float64(fMoE),
		ffnDense:      float64(fDense),
		ffnShared:     float64(a.SharedExpertFFN),
		weightBPP:     a.WeightBytes(),
		activationBPP: a.BytesPerParam,
		interleaved:   a.InterleaveStep > 0 && a.MoE(),
		moe:           a.MoE(),
		flopsPerUs:    h.peakFlops(a) * 1e6,
		bytesPerUs:    h.BwPeakTBs * 1e6,
	}
	for i, v := range p.Alpha {
		m.alpha[i] = toMicros(v)
	}
	return m, nil
}

// StepTime evaluates the formula above on the step.
func (m *TrainedPhysics) StepTime(s *Step) int64 {
	if s.Requests == 0 {
		return 1
	}
	L, d, dKV, dH, tp := m.layers, m.hidden, m.dKV, m.dHead, m.tp
	var prefill, attn float64
	for _, c := range s.Prefills {
		ti, si := float64(c.New), float64(c.Input)
		prefill += ti
		attn += 4 * m.headsPerGPU * ti * (si + ti/2) * dH
	}
	decode, ctx := float64(s.Decodes), float64(s.DecodeContext)

	var tPf, tPfKV float64
	if prefill > 0 {
		proj := L * 2 * prefill * d * (2*d + 2*dKV) / tp
		tPf = (proj + L*attn + m.ffnFlops(prefill)) / m.flopsPerUs
		tPfKV = L * 2 * (dKV / tp) * prefill * kvBytes / m.bytesPerUs
	}
	var tDc, tDcKV float64
	if decode > 0 {
		proj := L * 2 * decode * d * (2*d + 2*dKV) / tp
		dcAttn := L * 4 * m.headsPerGPU * ctx * dH
		tDc = (proj + dcAttn + m.ffnFlops(decode)) / m.flopsPerUs
		tDcKV = L * 2 * (dKV / tp) * kvBytes * (ctx + decode) / m.bytesPerUs
	}

	bytesAttn := L * d * (2*d + 2*dKV) * m.weightBPP / tp
	var bytesFFN float64
	if m.moeLayers > 0 {
		bytesFFN += m.moeLayers * (m.experts / tp) * 3 * d * m.ffnMoE * m.weightBPP
		if m.ffnShared > 0 {
			bytesFFN += m.moeLayers * 3 * d * m.ffnShared * m.weightBPP / tp
		}
	}
	if m.denseLayers > 0 {
		bytesFFN += m.denseLayers * 1 * 3 * d * m.ffnDense * m.weightBPP / tp
	}
	tWeight := (bytesAttn + bytesFFN) / m.bytesPerUs

	tokens := prefill + decode
	var tAllReduce float64
	if tp > 1 {
		tAllReduce = m.allReduce(L, tokens) + m.allReduce(m.denseLayers, tokens)
		if m.moe && m.moeLayers > 0 {
			tAllReduce += m.allReduce(m.moeLayers, tokens)
		}
	}
	var interleavedLayers float64
	if m.interleaved {
		interleavedLayers = m.moeLayers
	}
	b := &m.beta
	prefillTerm := b[0]*tPf + b[8]*tPfKV
	decodeTerm := b[1]*tDc + b[9]*tDcKV
	t := prefillTerm + decodeTerm +
		b[2]*tWeight +
		b[3]*tAllReduce +
		b[10]*0 + // MoE dispatch: data parallelism only
		b[4]*L +
		b[5]*float64(s.Requests) +
		b[6] +
		b[7]*interleavedLayers
	return max(1, toMicros(t))
}

// ffnFlops are the FFN FLOPs of n tokens: routed experts (k per token,
// spread evenly over the TP group), shared experts and dense layers.
func (m *TrainedPhysics) ffnFlops(n float64) float64 {
	var f float64
	d := m.hidden
	if m.moeLayers > 0 {
		f += m.moeLayers * (n * m.kEff / m.tp) * 6 * d * m.ffnMoE
		if m.ffnShared > 0 {
			f += m.moeLayers * n * 6 * d * m.ffnShared / m.tp
		}
	}
	if m.denseLayers > 0 {
		f += m.denseLayers * n * 1 * 6 * d * m.ffnDense / m.tp
	}
	return f
}

// allReduce is the ring all-reduce time of units layers' hidden states of
// tokens: two phases, each moving (TP−1)/TP of the data.
func (m *TrainedPhysics) allReduce(units, tokens float64) float64 {
	return units * tokens * m.hidden * m.activationBPP * 2.0 * ((m.tp - 1) / m.tp) / m.bytesPerUs
}

// QueueingTime is α0 whatever the input.
func (m *TrainedPhysics) QueueingTime(int64) int64 { return m.alpha[0] }

// OutputTokenTime is α2.
func (m *TrainedPhysics) OutputTokenTime() int64 { return m.alpha[2] }

// PostDecodeTime is α1.
func (m *TrainedPhysics) PostDecodeTime() int64 { return m.alpha[1] }
