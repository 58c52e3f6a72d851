package cli

import (
	"strings"
	"testing"
)

// A value the simulator rejects is reported with the setting's key, the
// same words however it was given; the flag (or --set pair) the user typed
// comes first. Flags that are not settings (--model, --hardware, --tp) are
// named by the CLI, not by the simulator.
func TestSimulatorErrorsNameTheFlagTyped(t *testing.T) {
	const body = "admission.policy: slo-gated needs at least one class's gate (admission.slo_gate.<class>)"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--admission-policy", "slo-gated"}, "--admission-policy: " + body},
		{[]string{"--set", "admission.policy=slo-gated"}, "--set admission.policy=slo-gated: " + body},
		{[]string{"--model", "no/such-model"}, `--model: unknown model "no/such-model" (known: meta-llama/llama-3.1-8b-instruct)`},
		{[]string{"--tp", "8"}, "--hardware/--tp: no profile for meta-llama/llama-3.1-8b-instruct on H100 at TP8"},
	} {
		code, out, errs := run(t, append([]string{"simulate", "--num-requests", "10"}, c.args...)...)
		msg := strings.TrimPrefix(strings.TrimRight(errs, "\n"), "optimize: ")
		if code != 2 || out != "" || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q", c.args, code, out, errs, c.want)
		}
	}
}
