package report

import (
	"fmt"
	"slices"
	"strings"
)

// Evidence is a kind of evidence a study is given, by the request it
// stores: `study validate` (held-out seeds, regimes, the Pareto front,
// other worlds), `study ablate`, `study validate --max-rate`. Its name is
// storage's kind of request and, for validation and ablation, the
// export's and the API's (study export --validation, GET
// /api/studies/NAME/ablation).
type Evidence string

// EvidenceKind says which request stored evidence answers: a validation
// of one of four kinds, an ablation or a max-rate search. `show` shows
// the latest of each.
type EvidenceKind string

// The kinds of evidence request.
const (
	EvidenceValidation Evidence = "validation"
	EvidenceAblation   Evidence = "ablation"
	EvidenceMaxRate    Evidence = "maxrate"

	KindPlain    EvidenceKind = "plain"    // validate: one trial on held-out seeds
	KindRegimes  EvidenceKind = "regimes"  // validate --regimes or --regime
	KindPareto   EvidenceKind = "pareto"   // validate --pareto
	KindWorlds   EvidenceKind = "worlds"   // validate --world (or --model, --hardware, --tp, --latency-model)
	KindAblation EvidenceKind = "ablation" // ablate
	KindMaxRate  EvidenceKind = "maxrate"  // validate --max-rate
)

// evidenceKinds declares every kind once: the request it is stored as
// and the command that makes it, in the order `show` lists validations.
var evidenceKinds = []struct {
	kind     EvidenceKind
	evidence Evidence
	command  string
}{
	{KindPlain, EvidenceValidation, "validate"},
	{KindRegimes, EvidenceValidation, "validate --regimes"},
	{KindPareto, EvidenceValidation, "validate --pareto"},
	{KindWorlds, EvidenceValidation, "validate --world"},
	{KindAblation, EvidenceAblation, "ablate"},
	{KindMaxRate, EvidenceMaxRate, "validate --max-rate"},
}

// Evidences lists the kinds of request, in the table's order.
func Evidences() []Evidence {
	var out []Evidence
	for _, k := range evidenceKinds {
		if !slices.Contains(out, k.evidence) {
			out = append(out, k.evidence)
		}
	}
	return out
}

// ParseEvidence reads a kind of request by its name; what it does not
// know is an error naming the kinds it does.
func ParseEvidence(name string) (Evidence, error) {
	all := Evidences()
	if i := slices.Index(all, Evidence(name)); i >= 0 {
		return all[i], nil
	}
	words := make([]string, len(all))
	for i, e := range all {
		words[i] = string(e)
	}
	return "", fmt.Errorf("unknown kind of evidence %q (allowed: %s)", name, strings.Join(words, ", "))
}

// ValidationKinds are the kinds of validation, in the order `show` lists
// their latest results.
var ValidationKinds = func() []EvidenceKind {
	var out []EvidenceKind
	for _, k := range evidenceKinds {
		if k.evidence == EvidenceValidation {
			out = append(out, k.kind)
		}
	}
	return out
}()

// Evidence is the request k is stored as.
func (k EvidenceKind) Evidence() Evidence {
	for _, e := range evidenceKinds {
		if e.kind == k {
			return e.evidence
		}
	}
	return EvidenceValidation
}

// Command is the command that makes evidence of kind k.
func (k EvidenceKind) Command() string {
	for _, e := range evidenceKinds {
		if e.kind == k {
			return e.command
		}
	}
	return "validate"
}
