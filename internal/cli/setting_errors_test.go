package cli

import (
	"strings"
	"testing"
)

// A value the simulator rejects is reported with the setting's key, the
// same words however it was given; the flag (or --set pair) the user typed
// comes first: the world's flags (--model, --tp, --latency-model) too.
func TestSimulatorErrorsNameTheFlagTyped(t *testing.T) {
	const body = "admission.policy: slo-gated needs at least one class's gate (admission.slo_gate.<class>)"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--admission-policy", "slo-gated"}, "--admission-policy: " + body},
		{[]string{"--set", "admission.policy=slo-gated"}, "--set admission.policy=slo-gated: " + body},
		{[]string{"--model", "no/such-model"}, `--model: model: "no/such-model" is not allowed (allowed: 01-ai/yi-34b, codellama/codellama-34b-instruct-hf,`},
		{[]string{"--tp", "3"}, "--tp: tp: meta-llama/llama-3.1-8b-instruct: num_attention_heads (32) is not divisible by TP 3"},
		{[]string{"--tp", "8", "--latency-model", "blackbox"}, "--latency-model: latency.model: no blackbox profile for meta-llama/llama-3.1-8b-instruct on H100 at TP8 (trained: H100/TP1, H100/TP2, H100/TP4); choose trained-physics or roofline"},
		{[]string{"--model", "meta-llama/llama-3.1-70b-instruct", "--tp", "1"}, "--tp: tp: meta-llama/llama-3.1-70b-instruct on H100 at TP1: does not fit: each GPU needs 132.22 GiB"},
	} {
		code, out, errs := run(t, append([]string{"simulate", "--num-requests", "10"}, c.args...)...)
		msg := strings.TrimPrefix(strings.TrimRight(errs, "\n"), "optimize: ")
		if code != 2 || out != "" || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q", c.args, code, out, errs, c.want)
		}
	}
}
