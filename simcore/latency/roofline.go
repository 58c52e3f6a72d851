package latency

import (
	"math"

	"optimize/simcore/keys"
)

// The roofline model (BLIS's --latency-model roofline) prices a step as
// one forward pass over every scheduled token, compute-bound or
// memory-bound, whichever is slower, with no fitted correction:
//
//	T = max(Σ FLOPs_r / (TP · peak · MFU_r),  (weights / TP + Σ dynamic_r / TP) / bw)
//
// summed over the batch's requests r, MFU_r the GPU's prefill or decode
// utilisation. A request of n new tokens after s processed ones costs
// per layer, with c = s + (n−1)/2 its mean attended context (c = s for
// n = 1) and d_kv = KV heads · d/heads:
//
//	FLOPs   = 2n(d² + 2d·d_kv) + 2n·d² + 4·heads·n·c·(d/heads)
//	        + 5·heads·n·c + 2n·d + MLP, MLP = 2n·2·d·f (·k experts per token in MoE layers)
//	dynamic = 2·kv heads·(d/heads)·bytes·(n + s) + d·bytes·n   (KV written and read, activations)
//
// and the weights, [d(d + 2d_kv) + d²]·L + 2·d·f per dense layer +
// 2·d·f_moe·E_eff per MoE layer, times their width, are read once per
// step; E_eff = E·(1 − ((E−k)/E)^N) is the expected number of experts N
// tokens touch. α0 + α1·input is the queueing delay, α2 the per-output-token
// overhead. vLLM has no such formula: it is an analytical bound.

// Roofline evaluates the roofline for one model on one GPU at one TP.
type Roofline struct {
	alpha [3]float64
	a     Arch
	h     Hardware
	tp    float64

	peak, bw                 float64 // FLOP/s, bytes/s
	nLayers, dModel, nHeads  float64
	nKV, dHead, dKV          float64
	moeLayers, denseLayers   float64
	ffnMoE, ffnDense         float64
	decodeFlops0, decodeCtx  float64 // one decode's FLOPs: decodeFlops0 + decodeCtx·context
	decodeBytes0, kvPerToken float64 // one decode's dynamic bytes: decodeBytes0 + kvPerToken·context
}

// mlpMatrices is the FFN's matrix count the roofline charges: two (up and
// down), as Hugging Face's intermediate_size of a gated FFN is already
// scaled so that 2·d·f matches its three matrices.
const mlpMatrices = 2.0

// NewRoofline checks the inputs and precomputes the per-decode terms.
func NewRoofline(alpha [3]float64, a Arch, h Hardware, tp int) (*Roofline, error) {
	if err := finite(keys.LatencyAlpha, alpha[:]); err != nil {
		return nil, err
	}
	if err := checkWorld(a, h, tp); err != nil {
		return nil, err
	}
	moeLayers, denseLayers := a.layerSplit()
	fMoE, fDense := a.ffnWidths()
	m := &Roofline{alpha: alpha, a: a, h: h, tp: float64(tp),
		peak: h.peakFlops(a) * 1e12, bw: h.BwPeakTBs * 1e12,
		nLayers: float64(a.Layers), dModel: float64(a.Hidden), nHeads: float64(a.Heads), nKV: float64(a.kvHeads()),
		moeLayers: float64(moeLayers), denseLayers: float64(denseLayers), ffnMoE: float64(fMoE), ffnDense: float64(fDense)}
	m.dHead = m.dModel / m.nHeads
	m.dKV = m.nKV * m.dHead
	m.decodeFlops0 = m.flops(0, 1)
	m.decodeCtx = (4*m.nHeads*m.dHead + 5*m.nHeads) * m.nLayers // d flops(seq, 1) / d seq
	m.kvPerToken = 2 * m.nLayers * m.nKV * m.dHead * a.BytesPerParam
	m.decodeBytes0 = m.kvPerToken + m.nLayers*m.dModel*a.BytesPerParam
	return m, nil
}

// flops are the FLOPs of newT tokens after seq processed ones.
func (m *Roofline) flops(seq, newT float64) float64 {
	L, d := m.nLayers, m.dModel
	gemm := (2*newT*(d*d+2*d*m.dKV) + 2*newT*d*d) * L
	ctx := seq
	if newT > 1 {
		ctx = seq + (newT-1)/2.0
	}
	gemm += 4 * m.nHeads * newT * ctx * m.dHead * L
	sram := (5*m.nHeads*newT*ctx + 2*newT*d) * L
	if m.moeLayers > 0 {
		gemm += 2 * newT * (mlpMatrices * d * m.ffnMoE) * float64(m.a.ExpertsPerToken) * m.moeLayers
	}
	if m.denseLayers > 0 {
		gemm += 2 * newT * (mlpMatrices * d * m.ffnDense) * m.denseLayers
	}
	return gemm + sram
}

// dynamicBytes are the KV and activation bytes of newT tokens after seq.
func (m *Roofline) dynamicBytes(seq, newT float64) float64 {
	bpp := m.a.BytesPerParam
	growth := m.kvPerToken * newT
	access := m.kvPerToken * seq
	return growth + access + m.nLayers*m.dModel*bpp*newT
}

// weightBytes are the weights read for a step of tokens new tokens.
func (m *Roofline) weightBytes(tokens float64) float64 {
	d := m.dModel
	perLayer := d*(d+2*m.dKV) + d*d
	var mlp float64
	if m.moeLayers > 0 {
		n, k := float64(m.a.Experts), float64(m.a.ExpertsPerToken)
		eff := n * (1.0 - math.Pow((n-k)/n, tokens))
		mlp += mlpMatrices * d * m.ffnMoE * eff * m.moeLayers
	}
	if m.denseLayers > 0 {
		mlp += mlpMatrices * d * m.ffnDense * m.denseLayers
	}
	return (perLayer*m.nLayers + mlp) * m.a.WeightBytes()
}

// StepTime evaluates the roofline on the step.
func (m *Roofline) StepTime(s *Step) int64 {
	if len(s.Prefills) == 0 && s.Decodes == 0 {
		return 1
	}
	var compute, dynamic, tokens float64
	for _, c := range s.Prefills {
		seq, n := float64(c.Done), float64(c.New)
		compute += m.flops(seq, n) / m.tp / (m.peak * m.h.MfuPrefill)
		dynamic += m.dynamicBytes(seq, n) / m.tp
		tokens += n
	}
	if s.Decodes > 0 {
		n, ctx := float64(s.Decodes), float64(s.DecodeContext)
		compute += (n*m.decodeFlops0 + ctx*m.decodeCtx) / m.tp / (m.peak * m.h.MfuDecode)
		dynamic += (n*m.decodeBytes0 + ctx*m.kvPerToken) / m.tp
		tokens += n
	}
	memory := (m.weightBytes(tokens)/m.tp + dynamic) / m.bw
	return max(1, toMicros(math.Max(compute, memory)*1e6))
}

// QueueingTime is α0 + α1·input.
func (m *Roofline) QueueingTime(input int64) int64 {
	return toMicros(m.alpha[0] + m.alpha[1]*float64(input))
}

// OutputTokenTime is α2.
func (m *Roofline) OutputTokenTime() int64 { return toMicros(m.alpha[2]) }

// PostDecodeTime is 0: the roofline has no completion overhead.
func (*Roofline) PostDecodeTime() int64 { return 0 }
