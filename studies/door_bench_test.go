package studies

import (
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"

	"optimize/internal/testkit"
	"optimize/search"
)

// BenchmarkDoorLine times one evaluate line (a random joint-slo vector on
// seeds 42, 43 and 44, after the door's baseline), the work evaluate does
// per vector outside its process start-up: `go test -bench DoorLine
// -cpuprofile` shows where it goes.
func BenchmarkDoorLine(b *testing.B) {
	reg, base := testkit.Builtins(b)
	env := &Env{Registry: reg, Base: base, Progress: io.Discard}
	o := Defaults()
	o.Template = "joint-slo"
	door, err := env.Door(o)
	if err != nil {
		b.Fatal(err)
	}
	space := door.ev.tpl.Space()
	rng := rand.New(rand.NewSource(1))
	lines := make([][]byte, 64)
	for i := range lines {
		values := randomVector(space, rng)
		var parts []string
		for k, p := range space {
			if !values[k].Absent() {
				parts = append(parts, fmt.Sprintf("%q:%s", p.Name, jsonValue(p, values[k])))
			}
		}
		lines[i] = []byte("{" + strings.Join(parts, ",") + "}")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := door.Line(i+1, lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
	}
}

func jsonValue(p search.Param, v search.Value) string {
	if p.Kind == search.Categorical {
		return fmt.Sprintf("%q", v.Choice)
	}
	return p.Format(v)
}

// randomVector draws each active parameter uniformly (floats to 4 digits).
func randomVector(space search.Space, rng *rand.Rand) []search.Value {
	values := make([]search.Value, len(space))
	for i := range values {
		values[i] = search.Inactive()
	}
	for i, p := range space {
		if !space.Active(values)[i] && p.When != nil {
			continue
		}
		switch p.Kind {
		case search.Categorical:
			values[i] = search.Value{Choice: p.Choices[rng.Intn(len(p.Choices))]}
		case search.Int:
			values[i] = search.Value{Number: p.Low + float64(rng.Intn(int(p.High-p.Low)+1))}
		default:
			values[i] = search.Value{Number: float64(int((p.Low+rng.Float64()*(p.High-p.Low))*1e4)) / 1e4}
		}
	}
	return values
}
