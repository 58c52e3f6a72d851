package workload

import (
	"os"
	"strings"
	"testing"
)

// baseSpec is a small valid spec that the error cases below mutate.
const baseSpec = `version: "2"
seed: 7
aggregate_rate: 100
num_requests: 50
clients:
  - id: a
    slo_class: critical
    rate_fraction: 0.5
    arrival: {process: gamma, cv: 2}
    input_distribution: {type: gaussian, params: {mean: 100, std_dev: 10, min: 10, max: 200}}
    output_distribution: {type: exponential, params: {mean: 20}}
    prefix_group: sys
    prefix_length: 64
  - id: b
    slo_class: standard
    rate_fraction: 0.5
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 30}}
    output_distribution: {type: exponential, params: {mean: 20}}
    reasoning:
      multi_turn: {max_rounds: 2, think_time_us: 1000, context_growth: accumulate}
`

func TestBaseSpecIsValid(t *testing.T) {
	if _, err := ParseSpec("t.yaml", []byte(baseSpec)); err != nil {
		t.Fatal(err)
	}
}

func TestSpecErrors(t *testing.T) {
	cases := []struct {
		name, old, new string
		want           []string // substrings of the one-line error
	}{
		{"unknown top-level key", "aggregate_rate: 100", "aggregate_rat: 100",
			[]string{"t.yaml: aggregate_rat: line 3: unknown key (allowed: version, seed, category, aggregate_rate,"}},
		{"unknown nested key", "arrival: {process: poisson}", "arrival: {proces: poisson}",
			[]string{"clients[1].arrival.proces:", "unknown key (allowed: process, cv)"}},
		{"bad arrival enum", "arrival: {process: poisson}", "arrival: {process: gama}",
			[]string{`t.yaml: clients[1].arrival.process: unknown value "gama" (allowed: poisson, gamma, weibull, constant)`}},
		{"missing arrival", "arrival: {process: poisson}", "arrival: {}",
			[]string{"clients[1].arrival.process: missing (allowed: poisson, gamma, weibull, constant)"}},
		{"bad distribution enum", "type: constant", "type: uniform",
			[]string{`clients[1].input_distribution.type: unknown value "uniform" (allowed: gaussian, exponential, pareto_lognormal, constant, empirical)`}},
		{"missing gaussian param", "std_dev: 10, ", "",
			[]string{`clients[0].input_distribution.params: missing "std_dev" (gaussian requires: mean, std_dev, min, max)`}},
		{"unknown param", "params: {value: 30}", "params: {value: 30, max: 40}",
			[]string{"clients[1].input_distribution.params.max: not a parameter of constant (allowed: value)"}},
		{"negative aggregate rate", "aggregate_rate: 100", "aggregate_rate: -5",
			[]string{"aggregate_rate: must be a finite number > 0", "got -5"}},
		{"zero rate fraction", "rate_fraction: 0.5\n    arrival: {process: poisson}", "rate_fraction: 0\n    arrival: {process: poisson}",
			[]string{"clients[1].rate_fraction: must be a finite number > 0, got 0"}},
		{"mistyped number", "rate_fraction: 0.5\n    arrival: {process: poisson}", "rate_fraction: fast\n    arrival: {process: poisson}",
			[]string{`clients[1].rate_fraction: line 16: expected a number, got "fast"`}},
		{"cv on poisson", "{process: poisson}", "{process: poisson, cv: 2}",
			[]string{"clients[1].arrival.cv: only used by gamma and weibull"}},
		{"gamma cv too large", "cv: 2}", "cv: 11}",
			[]string{"clients[0].arrival.cv: must be in (0, 10] for gamma, got 11"}},
		{"weibull cv out of range", "{process: gamma, cv: 2}", "{process: weibull, cv: 20}",
			[]string{"clients[0].arrival.cv: must be in [0.01, 10.4] for weibull, got 20"}},
		{"unknown slo class", "slo_class: standard", "slo_class: gold",
			[]string{`clients[1].slo_class: unknown value "gold" (allowed: critical, standard, sheddable, batch, background)`}},
		{"v1 tier name under v2", "slo_class: standard", "slo_class: interactive",
			[]string{`clients[1].slo_class: unknown value "interactive"`, "v1 names need version 1"}},
		{"unsupported cohorts", "num_requests: 50", "num_requests: 50\ncohorts: []",
			[]string{"t.yaml: cohorts: cohorts are not supported"}},
		{"unsupported multimodal", "    prefix_length: 64", "    prefix_length: 64\n    multimodal: {}",
			[]string{"clients[0].multimodal: multimodal clients are not supported"}},
		{"gaussian min above max", "min: 10, max: 200", "min: 300, max: 200",
			[]string{"clients[0].input_distribution.params.min: must be <= max (200), got 300"}},
		{"fractional bound", "min: 10, max: 200", "min: 10.5, max: 200",
			[]string{"clients[0].input_distribution.params.min: must be a whole number in [1, 1048576], got 10.5"}},
		{"prefix length without group", "    prefix_group: sys\n", "",
			[]string{"clients[0].prefix_length: needs a prefix_group"}},
		{"conflicting prefix length", "context_growth: accumulate}\n", "context_growth: accumulate}\n    prefix_group: sys\n    prefix_length: 32\n",
			[]string{`clients[1].prefix_length: 32 conflicts with the length 64 that clients[0] gives prefix_group "sys"`}},
		{"empirical bad key", "{type: exponential, params: {mean: 20}}\n    prefix_group", "{type: empirical, params: {ten: 1}}\n    prefix_group",
			[]string{"clients[0].output_distribution.params.ten: token count must be a whole number"}},
		{"lifecycle window reversed", "    prefix_length: 64", "    prefix_length: 64\n    lifecycle: {windows: [{start_us: 10, end_us: 5}]}",
			[]string{"clients[0].lifecycle.windows[0].end_us: must be > start_us (10), got 5"}},
		{"zero rounds", "max_rounds: 2", "max_rounds: 0",
			[]string{"clients[1].reasoning.multi_turn.max_rounds: must be in [1, 1000], got 0"}},
		{"bad context growth", "context_growth: accumulate", "context_growth: grow",
			[]string{`clients[1].reasoning.multi_turn.context_growth: unknown value "grow" (allowed: accumulate, or omit it)`}},
		{"closed loop on single-turn client", "    prefix_length: 64", "    prefix_length: 64\n    closed_loop: true",
			[]string{"clients[0].closed_loop: only applies to multi-turn clients"}},
		{"unknown version", `version: "2"`, `version: "3"`,
			[]string{`version: unknown value "3" (allowed: 1, 2)`}},
		{"repeated key", "seed: 7", "seed: 7\nseed: 8",
			[]string{"seed: line 3: key repeated (first at line 2)"}},
		{"list expected", "clients:\n", "clients: 3\nx:\n",
			[]string{"clients: line 5: expected a list"}},
		{"yaml syntax", "seed: 7", "seed: [7",
			[]string{"t.yaml: line"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(baseSpec, tc.old) {
				t.Fatalf("bad test: %q not in base spec", tc.old)
			}
			_, err := ParseSpec("t.yaml", []byte(strings.Replace(baseSpec, tc.old, tc.new, 1)))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "t.yaml: ") {
				t.Errorf("not a one-line error naming the file: %q", msg)
			}
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q\nlacks %q", msg, want)
				}
			}
		})
	}
}

func TestEmptySpec(t *testing.T) {
	for _, doc := range []string{"", "# nothing\n", "[]", "clients: []\naggregate_rate: 1"} {
		if _, err := ParseSpec("e.yaml", []byte(doc)); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: want a one-line error, got %v", doc, err)
		}
	}
}

func TestBuiltins(t *testing.T) {
	names := builtins.Names()
	if len(names) == 0 || !contains(names, "orthogonal-slo") {
		t.Fatalf("builtin workloads = %v", names)
	}
	for _, name := range names {
		spec, err := builtins.Spec(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if spec.Name != name+".yaml" {
			t.Errorf("spec name %q", spec.Name)
		}
	}
	spec, _ := builtins.Spec("orthogonal-slo")
	if spec.Seed != 42 || spec.AggregateRate != 2000 || spec.NumRequests != 1000 || len(spec.Clients) != 3 {
		t.Errorf("orthogonal-slo header: %+v", spec)
	}
	for i, want := range []string{"critical", "standard", "sheddable"} {
		c := spec.Clients[i]
		if c.SLOClass != want || c.PrefixGroup != "system-prompt" || *c.PrefixLength != 512 || !c.closedLoop() ||
			c.Reasoning.MultiTurn.MaxRounds != 3 || c.Reasoning.MultiTurn.ThinkTimeUs != 500000 {
			t.Errorf("client %d: %+v", i, c)
		}
	}
	if _, err := builtins.Spec("nope"); err == nil || !strings.Contains(err.Error(), "available: decode-heavy, multi-turn-kv, orthogonal-slo, prefill-heavy, ramp-chat, steady-chat") {
		t.Errorf("unknown builtin error: %v", err)
	}
}

func TestClosedLoopSwitch(t *testing.T) {
	cases := map[string]bool{
		"{max_rounds: 2}":                         true,
		"{max_rounds: 2, closed_loop: false}":     false,
		"{max_rounds: 2}\n    closed_loop: false": false,
	}
	for mt, want := range cases {
		doc := strings.Replace(baseSpec, "{max_rounds: 2, think_time_us: 1000, context_growth: accumulate}", mt, 1)
		spec, err := ParseSpec("t.yaml", []byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", mt, err)
		}
		if got := spec.Clients[1].closedLoop(); got != want {
			t.Errorf("%s: closedLoop = %v, want %v", mt, got, want)
		}
	}
}

func TestSecondDocumentRejected(t *testing.T) {
	_, err := ParseSpec("t.yaml", []byte(baseSpec+"---\nseed: 1\n"))
	if err == nil || !strings.Contains(err.Error(), "only one YAML document") {
		t.Errorf("got %v", err)
	}
}

// builtins are the binary's built-in workloads, read from the source tree
// (the simulator does not embed them; strategies hands them over).
var builtins = Library{FS: os.DirFS("../../data"), Dir: "workloads"}
