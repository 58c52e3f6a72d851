package studies

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"optimize/storage"
	"optimize/studies/report"
)

// Every kind of evidence request has one decoder, and a request of each
// kind reads back as what show lists of it; a kind storage does not know
// is an error naming those it does.
func TestEveryEvidenceKindDecodes(t *testing.T) {
	requests := []storedRequest{
		validationRequest{Seeds: []int64{100, 101}, Trials: []int{3}, Regimes: []string{"moderate"}},
		validationRequest{Seeds: []int64{100, 101}, Trials: []int{3, 5}, Pareto: true},
		ablationRequest{Trial: 7},
		maxRateRequest{Trial: 2, Seeds: []int64{42, 43}, Tolerance: 0.05},
	}
	seen := map[report.Evidence]bool{}
	for _, req := range requests {
		js, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		run, err := evidenceRun(storage.EvidenceRequest{Kind: string(req.evidence()), Request: string(js)})
		if err != nil {
			t.Fatalf("%s: %v", req.evidence(), err)
		}
		if want := req.listed(); !reflect.DeepEqual(run, want) {
			t.Errorf("%s read back as %+v, want %+v", req.evidence(), run, want)
		}
		if run.Kind.Evidence() != req.evidence() {
			t.Errorf("%s lists as kind %s, stored as %s", req.evidence(), run.Kind, run.Kind.Evidence())
		}
		seen[req.evidence()] = true
	}
	for _, e := range report.Evidences() {
		if requestDecoders[e] == nil || !seen[e] {
			t.Errorf("evidence %s: no decoder or no request tested", e)
		}
	}
	if len(requestDecoders) != len(report.Evidences()) {
		t.Errorf("%d decoders for %d kinds", len(requestDecoders), len(report.Evidences()))
	}
	_, err := evidenceRun(storage.EvidenceRequest{Kind: "verification", Request: "{}"})
	if err == nil || !strings.Contains(err.Error(), `unknown kind of evidence "verification" (allowed: validation, ablation, maxrate)`) {
		t.Errorf("unknown kind: %v", err)
	}
	if got := report.ValidationKinds; !reflect.DeepEqual(got, []report.EvidenceKind{report.KindPlain, report.KindRegimes, report.KindPareto, report.KindWorlds}) {
		t.Errorf("validation kinds %v", got)
	}
}
