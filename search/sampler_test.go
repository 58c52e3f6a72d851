package search

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/c-bata/goptuna"
)

func TestNewSamplerRejectsBadInputNamingTheField(t *testing.T) {
	storage := openStorage(t)
	good := mixedSpace()
	cases := []struct {
		name    string
		space   []Param
		method  Method
		opts    Options
		wantErr string
	}{
		{"empty space", nil, MethodTPE, Options{}, "search space: no parameters"},
		{"inverted bounds", []Param{{Name: "x", Kind: Float, Low: 2, High: 1}}, MethodTPE, Options{}, `param "x": Low 2 > High 1`},
		{"log low", []Param{{Name: "lr", Kind: LogFloat, Low: 0, High: 1}}, MethodTPE, Options{}, `param "lr": log-float Low must be > 0`},
		{"int fraction", []Param{{Name: "n", Kind: Int, Low: 0.5, High: 3}}, MethodTPE, Options{}, `param "n": int bounds must be whole`},
		{"nan bound", []Param{{Name: "x", Kind: Float, Low: math.NaN(), High: 1}}, MethodTPE, Options{}, `param "x": bounds must be finite`},
		{"no choices", []Param{{Name: "c", Kind: Categorical}}, MethodTPE, Options{}, `param "c": categorical needs at least one choice`},
		{"unknown kind", []Param{{Name: "k", Kind: "real"}}, MethodTPE, Options{}, `param "k": unknown kind "real" (allowed: float, int, log-float, categorical)`},
		{"duplicate", []Param{good[0], good[0]}, MethodTPE, Options{}, `param "w": duplicate name`},
		{"no name", []Param{{Kind: Float, High: 1}}, MethodTPE, Options{}, "param[0].Name is empty"},
		{"unknown method", good, Method("cmaes"), Options{}, `method: unknown sampler "cmaes"`},
		{"negative startup", good, MethodTPE, Options{StartupTrials: -1}, "options.StartupTrials"},
		{"one grid point", good, MethodGrid, Options{GridPoints: 1}, "options.GridPoints"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewSampler(storage, "bad", c.space, c.method, 1, c.opts)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, c.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
	if _, err := NewSampler(nil, "s", good, MethodTPE, 1, Options{}); err == nil || !strings.Contains(err.Error(), "storage") {
		t.Fatalf("nil storage: err = %v", err)
	}
	if _, err := NewSampler(storage, " ", good, MethodTPE, 1, Options{}); err == nil || !strings.Contains(err.Error(), "study name") {
		t.Fatalf("empty name: err = %v", err)
	}
}

func TestNewSamplerCreatesOnceUnderConcurrency(t *testing.T) {
	storage := openStorage(t)
	const workers = 6
	ids := make([]int, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s, err := NewSampler(storage, "shared", mixedSpace(), MethodTPE, int64(w), Options{})
			if err == nil {
				ids[w] = s.StudyID()
			}
			errs[w] = err
		}(w)
	}
	wg.Wait()
	for w := range ids {
		if errs[w] != nil {
			t.Fatalf("worker %d: %v", w, errs[w])
		}
		if ids[w] != ids[0] {
			t.Fatalf("study ids differ: %v", ids)
		}
	}
	again := newTestSampler(t, storage, "shared", mixedSpace(), MethodRandom, 9, Options{})
	if again.StudyID() != ids[0] {
		t.Fatalf("reload gave study %d, want %d", again.StudyID(), ids[0])
	}
}

func TestNewSamplerRefusesMaximizeStudy(t *testing.T) {
	storage := openStorage(t)
	id, err := storage.CreateNewStudy("max")
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.SetStudyDirection(id, goptuna.StudyDirectionMaximize); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSampler(storage, "max", mixedSpace(), MethodTPE, 1, Options{}); err == nil || !strings.Contains(err.Error(), "minimises") {
		t.Fatalf("err = %v, want direction error", err)
	}
}

func TestSameSeedRepeatsFifteenSequentialTrials(t *testing.T) {
	run := func(seed int64) [][]float64 {
		storage := openStorage(t) // a fresh database per study
		s := newTestSampler(t, storage, "repeat", mixedSpace(), MethodTPE, seed, Options{})
		for i := 0; i < 100; i++ {
			rand.Int63() // disturb the global source between studies
		}
		return runStudy(t, s, 0, 15, mixedObjective)
	}
	first, second, other := run(7), run(7), run(8)
	for i := range first {
		if !reflect.DeepEqual(first[i], second[i]) {
			t.Fatalf("trial %d: %v vs %v with the same seed", i, first[i], second[i])
		}
	}
	same := 0
	for i := range first {
		if reflect.DeepEqual(first[i], other[i]) {
			same++
		}
	}
	if same > 0 {
		t.Fatalf("seeds 7 and 8 proposed %d identical vectors", same)
	}
}

func TestProposalsAreSourcedAndStoredForGoptuna(t *testing.T) {
	storage := openStorage(t)
	s := newTestSampler(t, storage, "stored", mixedSpace(), MethodTPE, 3, Options{StartupTrials: 4})
	runStudy(t, s, 0, 6, mixedObjective)

	trials, err := storage.GetAllTrials(s.StudyID())
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 6 {
		t.Fatalf("%d trials stored, want 6", len(trials))
	}
	wantSource := []string{"startup", "startup", "startup", "startup", "tpe", "tpe"}
	for i, tr := range trials {
		if tr.State != goptuna.TrialStateComplete {
			t.Fatalf("trial %d state %v", i, tr.State)
		}
		if got := tr.SystemAttrs[AttrSource]; got != wantSource[i] {
			t.Errorf("trial %d source %q, want %q", i, got, wantSource[i])
		}
		if got := tr.SystemAttrs[AttrNumber]; got != fmt.Sprint(i) {
			t.Errorf("trial %d number attr %q", i, got)
		}
		if _, ok := tr.Distributions["n"].(goptuna.IntUniformDistribution); !ok {
			t.Errorf("trial %d: n stored as %T", i, tr.Distributions["n"])
		}
		if _, ok := tr.Params["mode"].(string); !ok {
			t.Errorf("trial %d: mode external value %T", i, tr.Params["mode"])
		}
	}
}

func TestProposalsDifferPerTrialNumberAndRepeatOnResume(t *testing.T) {
	storage := openStorage(t)
	s := newTestSampler(t, storage, "numbers", mixedSpace(), MethodRandom, 11, Options{})
	seen := map[string]int{}
	for number := 0; number < 20; number++ {
		id, values, err := s.Ask(number)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Fail(id); err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprint(values)
		if prev, dup := seen[key]; dup {
			t.Fatalf("numbers %d and %d proposed %v", prev, number, values)
		}
		seen[key] = number
	}
	// A resumed process asking number 7 again gets the same vector.
	resumed := newTestSampler(t, storage, "numbers", mixedSpace(), MethodRandom, 11, Options{})
	_, values, err := resumed.Ask(7)
	if err != nil {
		t.Fatal(err)
	}
	if seen[fmt.Sprint(values)] != 7 {
		t.Fatalf("resumed Ask(7) = %v, not the original proposal", values)
	}
}

func TestIntegerUpperBoundIsDrawn(t *testing.T) {
	p := Param{Name: "i", Kind: Int, Low: 0, High: 2}
	rng := rand.New(rand.NewSource(1))
	counts := map[float64]int{}
	for i := 0; i < 3000; i++ {
		counts[p.drawUniform(rng)]++
	}
	for v := 0.0; v <= 2; v++ {
		if counts[v] < 900 {
			t.Fatalf("value %v drawn %d times in 3000: %v", v, counts[v], counts)
		}
	}

	// End to end: random proposals and TPE's own (past its startup
	// trials) reach the top integer and the top category, which the
	// objective rewards.
	storage := openStorage(t)
	space := []Param{p, {Name: "c", Kind: Categorical, Choices: []string{"x", "y"}}}
	for _, method := range []Method{MethodRandom, MethodTPE} {
		s := newTestSampler(t, storage, "top-"+string(method), space, method, 5, Options{StartupTrials: 5})
		top := map[int]bool{}
		for number := 0; number < 30; number++ {
			id, vals, err := s.Ask(number)
			if err != nil {
				t.Fatal(err)
			}
			values := s.space.Encode(vals)
			trial, err := storage.GetTrial(id)
			if err != nil {
				t.Fatal(err)
			}
			// Past its startup trials: TPE's own proposals, or (for a
			// point already run) their redraws.
			if source := trial.SystemAttrs[AttrSource]; source != "startup" {
				top[0] = top[0] || values[0] == 2
				top[1] = top[1] || values[1] == 1
			}
			if err := s.Tell(id, -values[0]-values[1]); err != nil {
				t.Fatal(err)
			}
		}
		if !top[0] || !top[1] {
			t.Fatalf("%s: upper bounds never proposed by %s in 30 trials: %v", method, method, top)
		}
	}
}

func TestAskFixedValidatesAndStoresTheVector(t *testing.T) {
	storage := openStorage(t)
	s := newTestSampler(t, storage, "fixed", mixedSpace(), MethodTPE, 1, Options{})
	bad := [][]float64{
		{0, 1, 1},      // too short
		{9, 1, 1, 0},   // w out of range
		{0, 1.5, 1, 0}, // n not whole
		{0, 1, 1, 3},   // mode index out of range
		{math.NaN(), 1, 1, 0},
	}
	for _, values := range bad {
		if _, err := s.AskFixed(0, vector(s.space, values...)); err == nil {
			t.Fatalf("AskFixed(%v) accepted", values)
		}
	}
	want := []float64{0.5, 4, 10, 2}
	if _, err := s.AskFixed(0, []Value{{Number: 0}, {Number: 1}, {Number: 1}, {Choice: "d"}}); err == nil {
		t.Fatal("AskFixed accepted a choice that is not one of the parameter's")
	}
	id, err := s.AskFixed(0, vector(s.space, want...))
	if err != nil {
		t.Fatal(err)
	}
	trial, err := storage.GetTrial(id)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range s.Space() {
		if got := p.fromInternal(trial.InternalParams[p.Name]); got != want[i] {
			t.Fatalf("%s stored %v (= %v), want %v", p.Name, trial.InternalParams[p.Name], got, want[i])
		}
	}
	if trial.SystemAttrs[AttrSource] != "fixed" || trial.State != goptuna.TrialStateRunning {
		t.Fatalf("fixed trial: source %q state %v", trial.SystemAttrs[AttrSource], trial.State)
	}
}

func TestTellAndFail(t *testing.T) {
	storage := openStorage(t)
	s := newTestSampler(t, storage, "tell", mixedSpace(), MethodRandom, 1, Options{})
	id, _, err := s.Ask(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Tell(id, math.Inf(1)); err == nil {
		t.Fatal("Tell accepted +Inf")
	}
	if err := s.Tell(id, 1.25); err != nil {
		t.Fatal(err)
	}
	trial, _ := storage.GetTrial(id)
	if trial.State != goptuna.TrialStateComplete || trial.Value != 1.25 {
		t.Fatalf("after Tell: %v %v", trial.State, trial.Value)
	}
	if err := s.Fail(id); !errors.Is(err, goptuna.ErrTrialCannotBeUpdated) {
		t.Fatalf("Fail of a finished trial: %v", err)
	}
	id2, _, _ := s.Ask(1)
	if err := s.Fail(id2); err != nil {
		t.Fatal(err)
	}
	if trial, _ := storage.GetTrial(id2); trial.State != goptuna.TrialStateFail {
		t.Fatalf("after Fail: %v", trial.State)
	}
}

func TestPendingTrialsCarryTheLie(t *testing.T) {
	space := []Param{{Name: "x", Kind: Float, High: 1}}
	params := map[string]float64{"x": 500}
	trials := []goptuna.FrozenTrial{
		{ID: 1, State: goptuna.TrialStateComplete, Value: 1, InternalParams: params},
		{ID: 2, State: goptuna.TrialStateComplete, Value: 3, InternalParams: params},
		{ID: 3, State: goptuna.TrialStateRunning, InternalParams: params},               // pending: lied about
		{ID: 4, State: goptuna.TrialStateRunning, InternalParams: map[string]float64{}}, // params not written yet
		{ID: 6, State: goptuna.TrialStateFail, InternalParams: params},
	}
	s := &Sampler{space: space, method: MethodTPE}
	var scores []float64
	for _, h := range s.history(trials, 6) {
		scores = append(scores, h.score)
	}
	if want := []float64{1, 3, 3}; !reflect.DeepEqual(scores, want) {
		t.Fatalf("history scores %v, want %v: the two complete trials, then the pending one at the worst score", scores, want)
	}
	s.opts.NoLiar = true
	if got := len(s.history(trials, 6)); got != 2 {
		t.Fatalf("without the liar the history holds %d trials, want the 2 complete", got)
	}
}

// bounded keeps the 25 best and the 150 newest complete trials in trial
// order, and everything below that size.
func TestBoundedHistoryKeepsTheBestAndTheNewest(t *testing.T) {
	const n = 2000
	complete := make([]scored, n)
	for i := range complete {
		// 37 negative scores, all older than the newest 150 trials: the 25
		// best of them must be kept.
		complete[i] = scored{score: float64((i*37)%n) + 1, params: map[string]float64{"i": float64(i)}}
		if i%50 == 7 && i < n-defaultHistoryRecent {
			complete[i].score = -float64(i)
		}
	}
	got := bounded(complete, defaultHistoryRecent)
	if len(got) != historyBest+defaultHistoryRecent {
		t.Fatalf("kept %d, want %d", len(got), historyBest+defaultHistoryRecent)
	}
	last := -1.0
	best := 0
	for _, h := range got {
		i := h.params["i"]
		if i <= last {
			t.Fatalf("trial %v after %v: not in trial order", i, last)
		}
		last = i
		if int(i) < n-defaultHistoryRecent {
			best++
			if h.score >= 0 || i < 300 {
				t.Fatalf("old trial %v kept with score %v: not among the 25 best", i, h.score)
			}
		}
	}
	if best != historyBest {
		t.Fatalf("%d old trials kept, want the %d best", best, historyBest)
	}
	if small := complete[:historyBest+defaultHistoryRecent]; len(bounded(small, defaultHistoryRecent)) != len(small) {
		t.Fatal("a history at the bound was cut")
	}
}

// With a RUNNING trial sitting on the current optimum, TPE should propose
// further away from it than when the pending trial is invisible: at least
// 1.5 times as far on average, and a third fewer proposals within 1 of it.
func TestConstantLiarMovesAwayFromPendingOptimum(t *testing.T) {
	storage := openStorage(t)
	// The optimum, 6, is not among the completed points (1, 3, 4, 8, …:
	// a completed point is never proposed again, seen.go), so that without
	// the liar TPE may propose it again while it runs.
	space := []Param{{Name: "n", Kind: Int, Low: 0, High: 20}}
	f := func(n float64) float64 { return sq(n - 6) }
	setup := newTestSampler(t, storage, "liar", space, MethodTPE, 1, Options{})
	for i := 0; i < 12; i++ {
		n := math.Round((float64(i) + 0.5) / 12 * 20)
		if n == 6 {
			n = 5 // at 5 instead: 6 stays unrun
		}
		id, err := setup.AskFixed(i, vector(space, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := setup.Tell(id, f(n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := setup.AskFixed(12, vector(space, 6)); err != nil { // pending, never told
		t.Fatal(err)
	}

	distance := func(noLiar bool) (mean float64, near int) {
		const seeds = 30
		for seed := int64(1); seed <= seeds; seed++ {
			s := newTestSampler(t, storage, "liar", space, MethodTPE, seed, Options{NoLiar: noLiar})
			id, values, err := s.Ask(13)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Fail(id); err != nil { // keep it out of later proposals
				t.Fatal(err)
			}
			d := math.Abs(values[0].Number - 6)
			mean += d / seeds
			if d <= 1 {
				near++
			}
		}
		return mean, near
	}
	liarMean, liarNear := distance(false)
	offMean, offNear := distance(true)
	t.Logf("mean |n-6|: liar %.2f, off %.2f; within 1: liar %d/30, off %d/30", liarMean, offMean, liarNear, offNear)
	if liarMean < 1.5*offMean || 3*liarNear > 2*offNear {
		t.Fatal("constant liar did not move proposals away from the pending optimum")
	}
}
