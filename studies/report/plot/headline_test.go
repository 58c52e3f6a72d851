package plot

import (
	"bytes"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
	"optimize/studies/report"
)

// The report opens with the headline, before the template's text: the
// primary objective of the baseline against the best trial, the held-out
// verdict on that trial, and the price.
func TestHTMLOpensWithTheHeadline(t *testing.T) {
	r, _ := studykit.SyntheticReport(t, "joint-slo", 30)
	best := r.Complete[r.Best].Number
	r.Validation = &report.Validation{Seeds: []int64{100, 101},
		Candidates: []report.CandidateEvidence{{Trial: best, Verdict: "holds on held-out seeds"}}}
	var buf bytes.Buffer
	if err := HTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	head, desc := strings.Index(page, `id="headline"`), strings.Index(page, "Joint discovery on the orthogonal SLO workload")
	if head < 0 || desc < 0 || head > desc {
		t.Fatalf("headline at %d, template text at %d: want the headline first", head, desc)
	}
	headline := page[head : strings.Index(page[head:], "</section>")+head]
	row := r.Table()[r.Template.Primary]
	for _, want := range []string{"critical_ttft_p99 " + report.Human(row.Best) + " ms", "the baseline&#39;s " + report.Human(row.Baseline) + " ms", pct(row.Delta),
		"Validated on seeds 100,101: holds on held-out seeds", "Price: "} {
		if !strings.Contains(headline, want) {
			t.Errorf("the headline lacks %q:\n%s", want, headline)
		}
	}
}

// The price names every row the winner makes worse, a class's latency as
// much as an objective (a sheddable TTFT +94 % was left out), and no row
// it improves. slo-cascade's winner pays with the sheddable class.
func TestHeadlinePriceNamesEveryWorseRow(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "s", 12))
	r, err := report.Load(env.Store, env.Registry, "s")
	if err != nil {
		t.Fatal(err)
	}
	headline := headline(r).Price
	worse := 0
	for _, row := range r.Table()[len(r.Template.Objectives):] {
		if row.Unit == "ms" && row.Delta > 0 {
			worse++
			if !strings.Contains(headline, row.Name+" "+pct(row.Delta)) {
				t.Errorf("the price omits %s %s: %s", row.Name, pct(row.Delta), headline)
			}
		}
		if row.Unit == "ms" && row.Delta < 0 && strings.Contains(headline, row.Name+" ") {
			t.Errorf("the price names %s, which the winner improves (%s)", row.Name, pct(row.Delta))
		}
	}
	if worse == 0 {
		t.Fatalf("no class's latency got worse: nothing was checked (price %q)", headline)
	}
}
