package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
)

// An API mistake is named by the JSON field the client sent, never by the
// CLI's flag for the same input.
func TestErrorsNameTheJSONField(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	ts := newServer(t, env, "127.0.0.1:0", "")
	for _, c := range []struct{ body, say string }{
		{`{"template": "slo-cascade", "trials": 0}`, "trials: must be ≥ 1, got 0"},
		{`{"template": "slo-cascade", "trials": "abc"}`, "trials: a JSON string is not a whole number"},
		{`{"template": "slo-cascade", "trials": 2.5}`, "trials: a JSON number 2.5 is not a whole number"},
		{`{"template": "slo-cascade", "seeds": "1-3"}`, "seeds: a JSON string is not a list of whole numbers"},
		{`{"template": "slo-cascade", "seeds": []}`, "seeds: give at least one seed"},
		{`{"template": "slo-cascade", "seeds": [42, "x"]}`, "seeds: a JSON string is not a whole number"},
		{`{"template": "slo-cascade", "sampler": "cmaes"}`, `sampler: unknown sampler "cmaes"`},
		{`{"template": "slo-cascade", "sampler_seed": "x"}`, "sampler_seed: a JSON string is not a whole number"},
		{`{"template": "slo-cascade", "name": "a b"}`, `name: "a b" must be`},
		{`{"template": "slo-cascade", "workload": "nope"}`, `workload: unknown built-in workload "nope"`},
		{`{"template": "slo-cascade", "workload": "/etc/passwd"}`, `workload: "/etc/passwd": not a built-in workload or trace (`},
		{`{"template": "slo-cascade", "workload": "orthogonal-slo@nope"}`, `workload: unknown regime "nope"`},
		{`{"template": "slo-cascade", "trials": 1000000000000}`, "trials: 1000000000000 is over the limit of 100000 trials per study (--max-trials raises it)"},
		{`{"template": "slo-cascade", "seeds": [` + strings.Repeat("1,", 1000) + `2]}`, "seeds: 1001 is over the limit of 1000 seeds per study or command (--max-seeds raises it)"},
		{`{"template": "slo-cascade", "from": "ghost"}`, `from: study not found: "ghost"`},
		{`{"template": "nope"}`, `template: unknown template "nope"`},
		{`{"template": "slo-cascade", "sampler-seed": 3}`, "sampler-seed: not a field of this request (fields: template, name, trials, seeds, workload, sampler, sampler_seed, from, deployable)"},
	} {
		code, body := post(t, ts.URL+"/api/studies", "", c.body)
		var e struct{ Error string }
		if err := json.Unmarshal(body, &e); err != nil || code != http.StatusBadRequest || !strings.HasPrefix(e.Error, c.say) || namesFieldFlag(e.Error) {
			t.Errorf("%s: %d %q; want 400 starting %q, no flag of a request field named", c.body, code, e.Error, c.say)
		}
	}
}

// namesFieldFlag reports whether msg names the CLI flag of one of the
// request's fields (--sampler-seed for sampler_seed); the server's own
// flags (--max-trials, --data-dir) say what the operator set.
func namesFieldFlag(msg string) bool {
	for _, f := range jsonFields[createRequest]() {
		if strings.Contains(msg, "--"+strings.ReplaceAll(f, "_", "-")+":") || strings.Contains(msg, "--"+strings.ReplaceAll(f, "_", "-")+" ") {
			return true
		}
	}
	return false
}
