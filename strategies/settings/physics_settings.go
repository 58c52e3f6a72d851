package settings

import (
	"strconv"

	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/simcore/keys"
	"optimize/simcore/latency"
)

// physicsDocs say what each trained-physics coefficient multiplies
// (BLIS f90a1e3a's formula: T = β1a·T_pf_compute + β1b·T_pf_kv +
// β2a·T_dc_compute + β2b·T_dc_kv + β3·T_weight + β4·T_allreduce +
// β5·layers + β6·requests + β7 + β8·MoE layers, each T a roofline time
// of the model on the GPU: FLOPs at its peak, bytes at its bandwidth). A
// β of 1 on a roofline term is the GPU at its datasheet peak: below 1 is
// faster than the hardware allows.
var physicsDocs = map[string]string{
	"1a": "prefill compute (FLOPs at the GPU's peak)",
	"2a": "decode compute (FLOPs at the GPU's peak)",
	"3":  "weight reads (bytes at the HBM bandwidth)",
	"4":  "TP all-reduce (bytes at the HBM bandwidth)",
	"5":  "µs per layer per step",
	"6":  "µs per request in the step",
	"7":  "µs per step",
	"8":  "µs per MoE layer of an interleaved MoE model",
	"1b": "prefill KV writes (bytes at the HBM bandwidth)",
	"2b": "decode KV reads (bytes at the HBM bandwidth)",
	"ep": "expert-parallel dispatch (no effect: data parallelism is not modelled)",
}

// physicsAlphaDocs say what each trained-physics α is.
var physicsAlphaDocs = [3]string{
	"µs added to every request before it queues (client, HTTP, tokenisation)",
	"µs added once to a request's E2E after its last token",
	"µs per output token (reporting)",
}

// physicsCoeffs are the trained-physics coefficients, settable over the
// world data's (--physics-alpha-coeffs α0,α1,α2; --physics-beta-coeffs
// takes the β in the order of their keys, which its help lists).
func physicsCoeffs() []*Setting {
	var out []*Setting
	for i := range 3 {
		out = append(out, physicsCoeff(keys.PhysicsAlpha, "physics-alpha-coeffs", strconv.Itoa(i), i, "trained-physics α"+strconv.Itoa(i)+": "+physicsAlphaDocs[i]+"; over the world data's"))
	}
	for i, name := range latency.PhysicsBetaNames {
		out = append(out, physicsCoeff(keys.PhysicsBeta, "physics-beta-coeffs", name, i, "trained-physics β"+name+": "+physicsDocs[name]+"; over the world data's"))
	}
	return out
}

func physicsCoeff(family, flag, item string, i int, doc string) *Setting {
	alpha := family == keys.PhysicsAlpha
	unit := ""
	if alpha {
		unit = "µs"
	}
	value := func(c *cluster.Config) (v float64, set bool, data float64) {
		o, p := &c.Physics, resolved(c).Spec.Physics
		if alpha {
			return o.Alpha[i], o.AlphaSet[i], p.Alpha[i]
		}
		return o.Beta[i], o.BetaSet[i], p.Beta[i]
	}
	s := &Setting{Key: keys.Member(family, item), Flag: flag, Item: item, family: Vector, Kind: search.Float, Low: 0, High: huge,
		Unit: unit, Doc: doc, Component: CompCluster,
		get: func(c *cluster.Config) (float64, bool) {
			v, set, data := value(c)
			if set {
				return v, true
			}
			return data, true
		},
		set: func(c *cluster.Config, v float64) {
			o := &c.Physics
			if alpha {
				o.Alpha[i], o.AlphaSet[i] = v, true
			} else {
				o.Beta[i], o.BetaSet[i] = v, true
			}
		},
		copy: func(dst, src *cluster.Config) {
			d, s := &dst.Physics, &src.Physics
			if alpha {
				d.Alpha[i], d.AlphaSet[i] = s.Alpha[i], s.AlphaSet[i]
			} else {
				d.Beta[i], d.BetaSet[i] = s.Beta[i], s.BetaSet[i]
			}
		}}
	return s.when(trainedPhysicsRule())
}

// trainedPhysicsRule holds while the resolved latency model is
// trained-physics.
func trainedPhysicsRule() Rule {
	return Rule{Text: LatencyModelKey + " is " + latency.KindTrainedPhysics, subject: LatencyModelKey,
		holds: func(c *cluster.Config) bool { return resolved(c).Kind() == latency.KindTrainedPhysics },
		state: func(c *cluster.Config) string { return LatencyModelKey + " is " + resolved(c).Kind() }}
}
