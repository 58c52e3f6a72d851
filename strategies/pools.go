package strategies

import (
	"fmt"

	"optimize/simcore/cluster"
	"optimize/simcore/keys"
)

// How a template sizes prefill/decode pools. The simulator's pools are
// instance counts by index (pd.prefill_instances, pd.decode_instances,
// pd.shared_instances, with num_instances at least their sum); a template
// searches the prefill pool and derives the rest, so that no point of its
// space is an invalid cluster:
//
//   - With a GPU total (gpus: N) the cluster has exactly N GPUs. Without
//     pools its instances are N / tp; with a prefill pool of p instances
//     at the prefill TP a, the decode pool is the GPUs left over at the
//     decode TP b: (N − p·a) / b instances, and num_instances p + that.
//     This is the operator's question "how do I split these GPUs".
//   - Without one, a prefill pool the template turns on, with no decode
//     or shared pool given, goes in front of the num_instances instances,
//     which become the decode pool: num_instances grows by p. This is the
//     capacity question: each pool's size is searched, the cost follows.

// derivedKeys are the settings a template with a GPU total derives; it may
// neither fix nor search them.
func derivedKeys() []string {
	return []string{keys.NumInstances, keys.PDDecodeInstances, keys.PDSharedInstances}
}

// derives reports whether t derives setting key (its GPU total does).
func (t *Template) derives(key string) bool {
	if t.GPUs == 0 {
		return false
	}
	for _, k := range derivedKeys() {
		if k == key {
			return true
		}
	}
	return false
}

// derivePools sets the instance counts c's pools imply (see above). The
// error names what does not divide, for a space that lets it happen.
func (t *Template) derivePools(c *cluster.Config) error {
	pd := &c.PD
	tp := max(c.TP, 1)
	if t.GPUs == 0 {
		if pd.Prefill > 0 && pd.Decode == 0 && pd.Shared == 0 {
			pd.Decode = c.NumInstances
			c.NumInstances += pd.Prefill
		}
		return nil
	}
	pd.Decode, pd.Shared = 0, 0
	if pd.Prefill == 0 {
		if t.GPUs%tp != 0 {
			return fmt.Errorf("gpus %d: not a whole number of instances at %s %d", t.GPUs, keys.TP, tp)
		}
		c.NumInstances = t.GPUs / tp
		return nil
	}
	a, b := tp, tp
	if pd.PrefillTP > 0 {
		a = pd.PrefillTP
	}
	if pd.DecodeTP > 0 {
		b = pd.DecodeTP
	}
	left := t.GPUs - pd.Prefill*a
	if left < b || left%b != 0 {
		return fmt.Errorf("gpus %d: %d prefill instances at TP %d leave %d GPUs, not a whole number ≥ 1 of decode instances at TP %d (%s)",
			t.GPUs, pd.Prefill, a, left, b, keys.PDPrefillInstances)
	}
	pd.Decode = left / b
	c.NumInstances = pd.Prefill + pd.Decode
	return nil
}
