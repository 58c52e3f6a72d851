package search

import (
	"math"
	"reflect"
	"testing"

	"optimize/storage"
)

// A trial's params column as today's databases hold it (categoricals by
// index, null while inactive) decodes to choices by name and encodes back
// to the same text, so old studies show as before.
func TestStoredParamsRoundTripByName(t *testing.T) {
	space := conditionalSpace() // opt {sgd, adam}; lr only under adam; x
	for _, tc := range []struct {
		stored string
		want   []Value
	}{
		{"[1,0.01,0.25]", []Value{{Choice: "adam"}, {Number: 0.01}, {Number: 0.25}}},
		{"[0,null,0.5]", []Value{{Choice: "sgd"}, Inactive(), {Number: 0.5}}},
	} {
		floats, err := storage.DecodeParams([]byte(tc.stored))
		if err != nil {
			t.Fatal(err)
		}
		got, err := space.Decode(floats)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%s: decoded %v, want %v", tc.stored, got, tc.want)
		}
		for i := range got {
			if got[i].Any() != tc.want[i].Any() {
				t.Fatalf("%s: decoded %v, want %v", tc.stored, got, tc.want)
			}
		}
		if again := storage.EncodeParams(space.Encode(got)); again != tc.stored {
			t.Errorf("%s: encoded back as %s", tc.stored, again)
		}
	}
	if _, err := space.Decode([]float64{2, math.NaN(), 0.5}); err == nil {
		t.Error("index 2 of two choices decoded")
	}
	short, err := space.Decode([]float64{0})
	if err != nil || !short[1].Absent() || !short[2].Absent() {
		t.Errorf("a vector one parameter short decoded as %v, %v; want the rest inactive", short, err)
	}
}

// Space.Active compares a condition's choices by name: lr is active
// exactly under adam, and a conditional parameter under an inactive one is
// inactive whatever its parent's value.
func TestActiveByChoiceName(t *testing.T) {
	space := conditionalSpace()
	if got := space.Active([]Value{{Choice: "adam"}, {Number: 0.1}, {Number: 0}}); !reflect.DeepEqual(got, []bool{true, true, true}) {
		t.Errorf("under adam: %v", got)
	}
	if got := space.Active([]Value{{Choice: "sgd"}, Inactive(), {Number: 0}}); !reflect.DeepEqual(got, []bool{true, false, true}) {
		t.Errorf("under sgd: %v", got)
	}
	nested := append(Space{}, space...)
	nested = append(nested, Param{Name: "beta", Kind: Categorical, Choices: []string{"lo", "hi"}, When: &When{Param: "opt", Choices: []string{"adam"}}},
		Param{Name: "b2", Kind: Float, High: 1, When: &When{Param: "beta", Choices: []string{"hi"}}})
	if err := nested.Validate(); err != nil {
		t.Fatal(err)
	}
	// beta's stale "hi" must not switch b2 on while beta itself is off.
	if got := nested.Active([]Value{{Choice: "sgd"}, Inactive(), {Number: 0}, {Choice: "hi"}, {Number: 0.5}}); got[3] || got[4] {
		t.Errorf("under sgd: beta active %v, b2 active %v; want both inactive", got[3], got[4])
	}
}

// Check is the one range check: its words name the parameter and what it
// allows, the same for a number, a whole number and a choice.
func TestCheckNamesTheParameterAndItsSpace(t *testing.T) {
	n := Param{Name: "n", Kind: Int, Low: 1, High: 4}
	c := Param{Name: "mode", Kind: Categorical, Choices: []string{"a", "b"}}
	for _, tc := range []struct {
		p    Param
		v    Value
		want string
	}{
		{n, Value{Number: 5}, "n: 5 is out of range (allowed: whole numbers in [1, 4])"},
		{n, Value{Number: 2.5}, "n: 2.5 is not a whole number (allowed: whole numbers in [1, 4])"},
		{n, Inactive(), "n: NaN is out of range (allowed: whole numbers in [1, 4])"},
		{c, Value{Choice: "z"}, `mode: "z" is not allowed (allowed: a, b)`},
		{c, Inactive(), `mode: "" is not allowed (allowed: a, b)`},
	} {
		if err := tc.p.Check(tc.v); err == nil || err.Error() != tc.want {
			t.Errorf("Check(%v) = %v, want %q", tc.v, err, tc.want)
		}
	}
	if err := n.Check(Value{Number: 4}); err != nil {
		t.Errorf("the upper bound is refused: %v", err)
	}
	if err := c.Check(Value{Choice: "b"}); err != nil {
		t.Errorf("a choice is refused: %v", err)
	}
}

// The sampler hands out categoricals by name, and a stored proposal holds
// the choice's index (goptuna's CategoricalDistribution storage).
func TestAskGivesChoicesByName(t *testing.T) {
	st := openStorage(t)
	s := newTestSampler(t, st, "names", mixedSpace(), MethodRandom, 2, Options{})
	for n := 0; n < 10; n++ {
		id, values, err := s.Ask(n)
		if err != nil {
			t.Fatal(err)
		}
		mode := values[3].Choice
		trial, err := st.GetTrial(id)
		if err != nil {
			t.Fatal(err)
		}
		if stored := trial.InternalParams["mode"]; mode == "" || mixedSpace()[3].Choices[int(stored)] != mode {
			t.Fatalf("trial %d: mode %q, stored index %v", n, mode, stored)
		}
	}
}
