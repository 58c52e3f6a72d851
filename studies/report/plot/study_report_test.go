package plot

import (
	"bytes"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
	"optimize/studies/report"
)

// The page holds the five pictures inline, refers to nothing outside
// itself, and escapes text from template files and storage.
func TestHTMLIsSelfContainedAndEscaped(t *testing.T) {
	r, _ := studykit.SyntheticReport(t, "slo-cascade", 25)
	tpl := *r.Template
	tpl.Description = `<script>alert(1)</script> & more`
	r.Template = &tpl
	e := report.ObjectiveEvidence{InStudyDelta: -0.5, HeldOutDelta: -0.4, BetterOnSeeds: 2, Seeds: 2}
	e.CI95[0], e.CI95[1] = -0.45, -0.35
	obj := map[string]report.ObjectiveEvidence{"critical_ttft_p99": e}
	r.Validation = &report.Validation{Seeds: []int64{100, 101},
		Candidates: []report.CandidateEvidence{{Trial: 3, Verdict: `holds <img src=x onerror=alert(2)>`, Objectives: obj}},
		Regimes:    []report.RegimeEvidence{{Name: "rate-0.5x", Doc: "half the rate", Candidates: []report.CandidateEvidence{{Trial: 3, Verdict: "gain holds: x", Objectives: obj}}}}}
	r.Ablation = &report.Ablation{Trial: 3, Seeds: []int64{42}, Components: []report.ComponentEvidence{{Name: "priority", Settings: map[string]string{"b": "2", "a": "<1>"}}}}
	var buf bytes.Buffer
	if err := HTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, "<svg"); n != len(Kinds) {
		t.Errorf("%d inline SVGs, want %d", n, len(Kinds))
	}
	for _, banned := range []string{"http://", "https://", "<script", "<img", "xmlns", "<?xml", "url(", "@import", "<link"} {
		if strings.Contains(page, banned) {
			t.Errorf("the page contains %q", banned)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt; &amp; more", "holds &lt;img", "Held-out validation", "rate-0.5x",
		"Ablation of trial 3", "a=&lt;1&gt; b=2", "Study syn", "critical_prefill_chunk"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if err := wellFormed([]byte(page[strings.Index(page, "<svg") : strings.Index(page, "</svg>")+len("</svg>")])); err != nil {
		t.Errorf("the first inline SVG is not well-formed: %v", err)
	}
}

// A study without a complete trial still has a page, without pictures.
func TestHTMLWithoutTrials(t *testing.T) {
	r, _ := studykit.SyntheticReport(t, "slo-cascade", 0)
	var buf bytes.Buffer
	if err := HTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	if page := buf.String(); strings.Contains(page, "<svg") || !strings.Contains(page, "No complete trial yet") {
		t.Fatalf("page without trials:\n%s", page)
	}
}

// A validation in other worlds gives one block per world, titled with the
// world, each with its candidates' verdicts and tables.
func TestHTMLShowsEachWorldOfAValidation(t *testing.T) {
	r, _ := studykit.SyntheticReport(t, "slo-cascade", 5)
	e := report.ObjectiveEvidence{InStudyDelta: -0.7, HeldOutDelta: -0.21, BetterOnSeeds: 2, Seeds: 2}
	e.CI95[0], e.CI95[1] = -0.26, -0.16
	obj := map[string]report.ObjectiveEvidence{"critical_ttft_p99": e}
	r.Validation = &report.Validation{Seeds: []int64{100, 101}, Kind: report.KindWorlds, Worlds: []report.WorldEvidence{
		{Given: "latency.model=blackbox", Line: "m on H100, TP2, blackbox latency model", StudyWorld: true,
			Candidates: []report.CandidateEvidence{{Trial: 3, Verdict: report.VerdictHolds, Detail: "in the study's world", Objectives: obj}}},
		{Given: "latency.model=trained-physics", Line: "m on H100, TP2, trained-physics latency model",
			Candidates: []report.CandidateEvidence{{Trial: 3, Verdict: report.VerdictDoesNotHold, Detail: "in the other world", Objectives: obj}}}}}
	var buf bytes.Buffer
	if err := HTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	first := strings.Index(page, "In a world the study was tuned in: m on H100, TP2, blackbox latency model (latency.model=blackbox)")
	second := strings.Index(page, "In another world: m on H100, TP2, trained-physics latency model (latency.model=trained-physics;")
	if first < 0 || second < first || strings.Count(page, "<h3>Trial 3</h3>") != 2 || !strings.Contains(page[second:], "does not hold</b> — in the other world") ||
		!strings.Contains(page, "<code>study validate --world</code>") {
		t.Errorf("the page lacks the two world blocks in order, each with trial 3 and its verdict (at %d, %d)", first, second)
	}
}

// A robust study's page has its best trial's row in each scenario, with
// the scenario that binds named, and the latest max-rate search: its
// sentence and one row per seed, with rates read from the stored search.
func TestHTMLShowsRobustScenariosAndMaxRate(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	r := studykit.RobustStudyWithMaxRate(t, env, "rb", 3)
	var buf bytes.Buffer
	if err := HTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	rj, err := r.Robust(&r.Complete[r.Best])
	if err != nil || rj == nil {
		t.Fatalf("robust table: %v, %v", rj, err)
	}
	sec := section(t, page, `id="robust"`)
	for _, want := range []string{"<td>base</td>", "<td>near-capacity</td>", "Binds: <b>" + rj.Binding + "</b>", "2 scenarios"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the robust section lacks %q:\n%s", want, sec)
		}
	}
	m := r.MaxRate
	if m == nil || len(m.PerSeed) != 2 || !(m.Winner > 0) {
		t.Fatalf("max rate %+v, want two seeds searched", m)
	}
	sec = section(t, page, `id="max-rate"`)
	for _, want := range []string{"sustains " + report.RateText(float64(m.Winner)), "the baseline " + report.RateText(float64(m.Baseline)),
		`<td class="num">100</td>`, `<td class="num">101</td>`, `<td class="num">` + m.PerSeed[1].Winner.Text() + "</td>"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the max-rate section lacks %q:\n%s", want, sec)
		}
	}
}

// section is the page from the heading with attr to the next h2.
func section(t *testing.T, page, attr string) string {
	t.Helper()
	i := strings.Index(page, attr)
	if i < 0 {
		t.Fatalf("the page has no %s", attr)
	}
	s := page[i:]
	if j := strings.Index(s[1:], "<h2"); j >= 0 {
		s = s[:j+1]
	}
	return s
}
