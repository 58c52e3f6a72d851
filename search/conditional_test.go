package search

import (
	"math"
	"testing"
)

// conditionalSpace: "lr" matters only under the "adam" choice; a score
// that depends on lr only there.
func conditionalSpace() Space {
	return Space{
		{Name: "opt", Kind: Categorical, Choices: []string{"sgd", "adam"}},
		{Name: "lr", Kind: LogFloat, Low: 1e-4, High: 1, When: &When{Param: "opt", Choices: []string{"adam"}}},
		{Name: "x", Kind: Float, Low: 0, High: 1},
	}
}

func conditionalScore(v []float64) float64 {
	s := math.Abs(v[2] - 0.3)
	if v[0] == 1 {
		s += math.Abs(math.Log10(v[1]) + 2) // best at lr = 0.01
	} else {
		s += 1
	}
	return s
}

// A conditional axis is NaN exactly when its condition fails, is stored
// only when active, and TPE models it only from the trials where it was.
func TestConditionalAxesAreSampledOnlyWhenActive(t *testing.T) {
	for _, method := range []Method{MethodTPE, MethodRandom, MethodGrid} {
		t.Run(string(method), func(t *testing.T) {
			storage := openStorage(t)
			s := newTestSampler(t, storage, "cond-"+string(method), conditionalSpace(), method, 3, Options{GridPoints: 3})
			active := 0
			for n := 0; n < 40; n++ {
				id, vals, err := s.Ask(n)
				if vals[0].Choice != "adam" && vals[0].Choice != "sgd" {
					t.Fatalf("trial %d: opt=%+v, want a choice by name", n, vals[0])
				}
				v := s.space.Encode(vals)
				if err != nil {
					t.Fatal(err)
				}
				if (v[0] == 1) == math.IsNaN(v[1]) {
					t.Fatalf("trial %d: opt=%v but lr=%v", n, v[0], v[1])
				}
				trial, err := storage.GetTrial(id)
				if err != nil {
					t.Fatal(err)
				}
				if _, stored := trial.InternalParams["lr"]; stored != (v[0] == 1) {
					t.Fatalf("trial %d: lr stored=%v with opt=%v", n, stored, v[0])
				}
				if v[0] == 1 {
					active++
				}
				if err := s.Tell(id, conditionalScore(v)); err != nil {
					t.Fatal(err)
				}
			}
			if active == 0 || active == 40 {
				t.Fatalf("%d of 40 trials chose adam; want both branches explored", active)
			}
			trials, _ := storage.GetAllTrials(s.StudyID())
			if got := len(observations(s.history(trials, 40), "lr")); got != active {
				t.Errorf("TPE would model lr from %d trials, want the %d where it was active", got, active)
			}
		})
	}
}

// AskFixed takes NaN for an inactive axis and rejects a value there.
func TestAskFixedConditional(t *testing.T) {
	s := newTestSampler(t, openStorage(t), "fixed", conditionalSpace(), MethodTPE, 1, Options{})
	if _, err := s.AskFixed(0, vector(s.space, 0, math.NaN(), 0.5)); err != nil {
		t.Fatalf("inactive NaN refused: %v", err)
	}
	if _, err := s.AskFixed(1, vector(s.space, 0, 0.01, 0.5)); err == nil {
		t.Error("a value for an inactive axis was accepted")
	}
	if _, err := s.AskFixed(2, vector(s.space, 1, math.NaN(), 0.5)); err == nil {
		t.Error("NaN for an active axis was accepted")
	}
}

// Importance gives a conditional parameter credit for its inactive state
// too: here the branch decides most of the score.
func TestImportanceWithInactiveValues(t *testing.T) {
	space := conditionalSpace()
	var values [][]Value
	var scores []float64
	for i := 0; i < 40; i++ {
		v := []float64{float64(i % 2), math.NaN(), float64(i%10) / 10}
		if v[0] == 1 {
			v[1] = 0.01
		}
		values, scores = append(values, vector(space, v...)), append(scores, conditionalScore(v))
	}
	imp := Importance(values, scores, space)
	// lr's presence carries the same information as the branch, so the
	// two share the credit; x explains little.
	if !(imp[0] > 0.3 && imp[1] > 0.3 && imp[0]+imp[1] > 0.9) {
		t.Errorf("importance %v: the branch and lr's presence should explain over 90%% of the score", imp)
	}
}
