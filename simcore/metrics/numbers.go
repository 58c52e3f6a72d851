package metrics

import (
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Number is one number of a run's summary (T is Summary or ClassSummary),
// named as its JSON spells it: "tokens_per_sec", "kv.transfer_ms",
// "ttft_ms.p99"; within a class "completed", "e2e_ms.p50".
//
// The numbers are read from the json tags of Summary, ClassSummary,
// KVSummary and Dist, the one place their names are written: a field added
// there is averaged by Mean and can be read by name (objectives,
// constraints, reports) without another edit. Its unit is the unit tag
// beside the json tag (a distribution's statistics take the
// distribution's). Per-class summaries
// (Summary.PerSLO) are ClassSummary numbers, not Summary ones.
type Number[T any] struct {
	Name string
	// Dist and Stat name the distribution and the statistic of a latency
	// distribution's number ("ttft_ms", "p99"); both "" otherwise.
	Dist, Stat string
	// Optional numbers (pointers in the summary) are absent from runs
	// without a latency target (or, for the cost, without a price).
	Optional bool
	// Same numbers are the configuration's, equal in every run of it (tag
	// mean:"same"): Mean keeps them instead of averaging.
	Same bool
	// Unit is what the number counts or measures, as people read it:
	// "ms", "tokens/s", "req/s", "requests", "fraction" (0–1), "ratio".
	Unit  string
	index []int
}

// Get returns the number in s; false when it is optional and absent.
func (n Number[T]) Get(s *T) (float64, bool) {
	f := reflect.ValueOf(s).Elem().FieldByIndex(n.index)
	if n.Optional {
		if f.IsNil() {
			return 0, false
		}
		f = f.Elem()
	}
	return f.Float(), true
}

// set stores v (an optional number gets a pointer of its own).
func (n Number[T]) set(s *T, v float64) {
	f := reflect.ValueOf(s).Elem().FieldByIndex(n.index)
	if n.Optional {
		f.Set(reflect.ValueOf(&v))
		return
	}
	f.SetFloat(v)
}

// SummaryNumbers lists a Summary's numbers in JSON order.
func SummaryNumbers() []Number[Summary] { return slices.Clone(summaryNumbers()) }

// ClassNumbers lists a ClassSummary's numbers in JSON order.
func ClassNumbers() []Number[ClassSummary] { return slices.Clone(classNumbers()) }

// DistStats lists a latency distribution's statistics in JSON order.
func DistStats() []string { return slices.Clone(distStats()) }

var (
	summaryNumbers = sync.OnceValue(func() []Number[Summary] { return numbersOf[Summary]() })
	classNumbers   = sync.OnceValue(func() []Number[ClassSummary] { return numbersOf[ClassSummary]() })
	distStats      = sync.OnceValue(func() []string {
		var out []string
		for _, n := range numbersOf[Dist]() {
			out = append(out, n.Name)
		}
		return out
	})
)

// numbersOf walks T's exported fields by their json tags: float64 and
// *float64 are numbers, structs (Dist, KVSummary) are walked with their
// name as a prefix, embedded structs (GatewayNumbers) without one, anything
// else (the per-class map) is left out.
func numbersOf[T any]() []Number[T] {
	var out []Number[T]
	var walk func(t reflect.Type, prefix string, index []int, dist, unit string)
	walk = func(t reflect.Type, prefix string, index []int, dist, unit string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			idx := append(index[:len(index):len(index)], i)
			if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(f.Type, prefix, idx, "", "") // embedded: its fields are the parent's, as in JSON
				continue
			}
			if name == "" || name == "-" {
				continue
			}
			n := Number[T]{Name: prefix + name, Unit: f.Tag.Get("unit"), Same: f.Tag.Get("mean") == "same", index: idx}
			if dist != "" {
				n.Dist, n.Stat, n.Unit = dist, name, unit
			}
			switch {
			case f.Type.Kind() == reflect.Float64:
				out = append(out, n)
			case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Float64:
				n.Optional = true
				out = append(out, n)
			case f.Type == reflect.TypeFor[Dist]():
				walk(f.Type, prefix+name+".", idx, prefix+name, n.Unit)
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, prefix+name+".", idx, "", "")
			}
		}
	}
	walk(reflect.TypeFor[T](), "", nil, "", "")
	return out
}
