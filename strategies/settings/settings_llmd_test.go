package settings

import (
	"strings"
	"testing"

	"optimize/simcore/route"
)

// Every scorer weight and every llm-d row says what it is in production:
// an llm-d scorer's weight is that plugin's weight, exactly; any other
// scorer's names the nearest plugin and how it differs, or what would have
// to be built.
func TestLLMDRows_DeclareTheirProductionCounterpart(t *testing.T) {
	n := 0
	for _, s := range All() {
		name, isWeight := strings.CutPrefix(s.Key, "routing.weight.")
		llmdRow := s.Key == "routing.picker" || strings.Count(s.Key, ".") == 2 && strings.HasSuffix(strings.Split(s.Key, ".")[1], "-scorer")
		if !isWeight && !llmdRow {
			continue
		}
		n++
		p := s.Production
		switch {
		case isWeight && route.LLMDPluginType(name) != "":
			if p.System != SystemLLMD || p.Name != route.LLMDPluginType(name) || p.Param != ParamWeight || p.Fidelity != Exact || p.Values != nil {
				t.Errorf("%s: %+v, want the exact weight of %s", s.Key, p, route.LLMDPluginType(name))
			}
		case p.Fidelity != Exact && p.Note == "":
			t.Errorf("%s: %v without a note saying how it differs or what to build", s.Key, p.Fidelity)
		case llmdRow && (p.System != SystemLLMD || p.Param == "" || p.Fidelity != Exact):
			t.Errorf("%s: %+v, want an exact llm-d parameter", s.Key, p)
		}
	}
	if want := len(route.ScorerNames()) + 1 + 11; n != want {
		t.Errorf("%d weight and llm-d rows, want %d (a weight per scorer, the picker, 11 llm-d parameters)", n, want)
	}
	if s, _ := Lookup("routing.prefix-cache-scorer.max_prefix_blocks_to_match"); s.Production.Name != "approx-prefix-cache-producer" ||
		s.Production.Param != "maxPrefixBlocksToMatch" {
		t.Errorf("max_prefix_blocks_to_match: %+v, want approx-prefix-cache-producer's maxPrefixBlocksToMatch", s.Production)
	}
}
