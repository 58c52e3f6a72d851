package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"optimize/search"
	"optimize/strategies"
)

// evaluateOut is one result line of optimize evaluate.
type evaluateOut struct {
	Line         int                 `json:"line"`
	Params       map[string]any      `json:"params"`
	Objectives   map[string]*float64 `json:"objectives"`
	Violations   map[string]*float64 `json:"violations"`
	Violation    float64             `json:"violation"`
	Feasible     bool                `json:"feasible"`
	Score        float64             `json:"score"`
	SamplerScore float64             `json:"sampler_score"`
	Error        string              `json:"error"`
}

// evaluateRun runs evaluate on input and returns its header's raw
// text and its result lines.
func evaluateRun(t *testing.T, input string, args ...string) (int, string, []evaluateOut, string) {
	t.Helper()
	path := writeTemp(t, "in.jsonl", input)
	code, out, errs := run(t, append([]string{"evaluate", "--input", path}, args...)...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var res []evaluateOut
	for _, l := range lines[1:] {
		var r evaluateOut
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		res = append(res, r)
	}
	return code, lines[0], res, errs
}

// A study's trials, their parameter vectors given to evaluate as study
// export's params write them (inactive parameters null), come back with
// the stored objectives, violations, total and score to the bit; the
// output is the same at GOMAXPROCS 1 and 2.
func TestEvaluateReproducesAStudysTrialsBitForBit(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "e.db")
	if code, _, errs := run(t, "study", "create", "joint-slo", "--trials", "8", "--seeds", "42,43", "--name", "e",
		"--storage", dsn, "--workers", "1"); code != 0 {
		t.Fatalf("create: %s", errs)
	}
	r := openReport(t, dsn, "e")
	if len(r.Complete) != 8 {
		t.Fatalf("%d complete trials, want 8", len(r.Complete))
	}
	var in strings.Builder
	for i := range r.Complete {
		line, err := json.Marshal(r.ParamMap(r.Complete[i].Params))
		if err != nil {
			t.Fatal(err)
		}
		in.Write(append(line, '\n'))
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	code, header, got, errs := evaluateRun(t, in.String(), "joint-slo", "--seeds", "42,43")
	if code != 0 || len(got) != len(r.Complete) {
		t.Fatalf("exit %d, %d lines for %d trials: %s", code, len(got), len(r.Complete), errs)
	}
	var h struct {
		Baseline map[string]float64 `json:"baseline"`
		Scores   []search.ScoreRule `json:"scores"`
	}
	if err := json.Unmarshal([]byte(header), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Scores) != 2 || h.Scores[0].Weight != search.DefaultViolationWeight || h.Scores[1].Name != "sampler_score" || h.Scores[1].Weight != 10 {
		t.Errorf("header's score rules %+v, want score at %g and sampler_score at 10", h.Scores, search.DefaultViolationWeight)
	}
	for _, o := range r.Template.Objectives {
		want, err := strategies.Metric(&r.Baseline, o.Metric)
		if err != nil || math.Float64bits(h.Baseline[o.Name]) != math.Float64bits(want) {
			t.Errorf("baseline %s: %v, the study stores %v (%v)", o.Name, h.Baseline[o.Name], want, err)
		}
	}
	feasible := 0
	for i, c := range r.Complete {
		g := got[i]
		if g.Line != i+1 || g.Error != "" {
			t.Fatalf("line %d: %+v", i+1, g)
		}
		for k, o := range r.Template.Objectives {
			if v := g.Objectives[o.Name]; v == nil || math.Float64bits(*v) != math.Float64bits(c.Objectives[k]) {
				t.Errorf("trial %d %s: evaluate %v, stored %v", c.Number, o.Name, v, c.Objectives[k])
			}
		}
		for k, con := range r.Template.Constraints {
			if v := g.Violations[con.Words()]; v == nil || math.Float64bits(*v) != math.Float64bits(c.Violations[k]) {
				t.Errorf("trial %d violation %q: evaluate %v, stored %v", c.Number, con.Words(), v, c.Violations[k])
			}
		}
		if math.Float64bits(g.Score) != math.Float64bits(c.Score) || math.Float64bits(g.Violation) != math.Float64bits(c.Violation) {
			t.Errorf("trial %d: evaluate score %v violation %v, stored %v %v", c.Number, g.Score, g.Violation, c.Score, c.Violation)
		}
		// The samplers' rank beside the score, as TPE computes it.
		if want := search.SamplerScore(c.Score, c.Violation); math.Float64bits(g.SamplerScore) != math.Float64bits(want) {
			t.Errorf("trial %d: sampler_score %v, TPE ranks it %v", c.Number, g.SamplerScore, want)
		}
		if g.Feasible {
			feasible++
		} else if !(g.SamplerScore < g.Score) {
			t.Errorf("trial %d infeasible: sampler_score %v not below score %v", c.Number, g.SamplerScore, g.Score)
		}
	}
	if feasible == 0 {
		t.Errorf("no trial feasible: the comparison never saw a feasible score")
	}
	runtime.GOMAXPROCS(2)
	path := writeTemp(t, "again.jsonl", in.String())
	_, one, _ := run(t, "evaluate", "joint-slo", "--seeds", "42,43", "--input", path)
	runtime.GOMAXPROCS(1)
	_, two, _ := run(t, "evaluate", "joint-slo", "--seeds", "42,43", "--input", path)
	if one != two {
		t.Errorf("evaluate's output differs between GOMAXPROCS 2 and 1")
	}
}

// Each refusal is one line naming the line, the parameter and what is
// allowed (or the condition that makes it inactive); evaluate goes on
// with the next line and exits 2 at the end.
func TestEvaluateRefusesABadVectorInOneLineAndGoesOn(t *testing.T) {
	full := `"prefix_affinity_weight":3,"queue_depth_weight":2,"kv_utilization_weight":2,"slo_priority_weight":0,"token_load_weight":0,` +
		`"critical_prefill_chunk":256,"token_budget":2048,"admission":"always-admit"`
	input := strings.Join([]string{
		`{` + full + `,"scheduler":"fcfs"}`,
		`{` + full + `}`,
		`{` + full + `,"scheduler":"fcfs","critical_base":12}`,
		`{` + full + `,"scheduler":"fcfs","nope":1}`,
		`{` + full + `,"scheduler":"lifo"}`,
		`{` + full + `,"scheduler":"fcfs"`,
		``,
		`[1,2]`,
		`{` + full + `,"scheduler":"fcfs","queue_depth_weight":3}`,
		`{` + full + `,"scheduler":true}`,
		`{` + full + `,"scheduler":"fcfs"}`,
	}, "\n")
	code, _, got, errs := evaluateRun(t, input, "joint-slo", "--seeds", "42")
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, errs)
	}
	want := map[int]string{
		2:  "line 2: scheduler: missing (one of fcfs, priority-fcfs, sjf, slo-deadline); give every active parameter: ",
		3:  "line 3: critical_base: has no effect unless parameter scheduler is priority-fcfs (it is fcfs)",
		4:  "line 4: nope: template joint-slo has no such parameter (parameters: prefix_affinity_weight, ",
		5:  `line 5: scheduler: "lifo" is not allowed (allowed: fcfs, priority-fcfs, sjf, slo-deadline)`,
		6:  "line 6: not JSON: ",
		8:  `line 8: want a JSON object of parameter name → value`,
		9:  "line 9: queue_depth_weight: given twice",
		10: "line 10: scheduler: want a number or a choice (a string), got true",
	}
	if len(got) != 10 {
		t.Fatalf("%d output lines for 10 non-blank input lines: %+v", len(got), got)
	}
	for _, g := range got {
		w, refused := want[g.Line]
		switch {
		case refused && !strings.HasPrefix(g.Error, w):
			t.Errorf("line %d: error %q, want it to start %q", g.Line, g.Error, w)
		case !refused && (g.Error != "" || g.Score <= 0):
			t.Errorf("line %d: %+v, want a result", g.Line, g)
		}
		if strings.Contains(g.Error, "\n") {
			t.Errorf("line %d: error on more than one line: %q", g.Line, g.Error)
		}
	}
	// Lines 1 and 11 are one vector: one result.
	if got[0].Score != got[len(got)-1].Score || got[len(got)-1].Line != 11 {
		t.Errorf("the same vector twice: scores %v and %v (line %d)", got[0].Score, got[len(got)-1].Score, got[len(got)-1].Line)
	}
	if !strings.Contains(errs, "8 of the input's lines refused") {
		t.Errorf("stderr does not count the refusals: %s", errs)
	}
	if code, _, errs := run(t, "evaluate", "no-such-template", "--input", writeTemp(t, "x", "")); code != 2 || !strings.Contains(errs, "joint-slo") {
		t.Errorf("an unknown template: exit %d, %s", code, errs)
	}
}

// An optimizer writes a vector and waits for its answer before the next:
// evaluate answers each line while its input stays open.
func TestEvaluateAnswersEachLineBeforeTheNext(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		var errb strings.Builder
		done <- Execute([]string{"evaluate", "slo-cascade", "--seeds", "42"}, Streams{In: inR, Out: outW, Err: &errb})
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	if !lines.Scan() || !strings.Contains(lines.Text(), `"baseline"`) {
		t.Fatalf("no header: %q", lines.Text())
	}
	vector := `{"critical_base":12,"standard_base":4,"age_weight_per_ms":0.01,"sheddable_urgency_ms":200,"critical_blend":0.2,"critical_prefill_chunk":%d}` + "\n"
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(inW, vector, 100*i) // the pipe blocks until evaluate reads it
		if !lines.Scan() {
			t.Fatalf("no answer to line %d", i)
		}
		var r evaluateOut
		if err := json.Unmarshal(lines.Bytes(), &r); err != nil || r.Line != i || r.Error != "" || !(r.Score > 0) {
			t.Fatalf("line %d: %v %s", i, err, lines.Text())
		}
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}
