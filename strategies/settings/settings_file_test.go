package settings

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"optimize/simcore/cluster"
	"optimize/simcore/route"
)

// settingsText is WriteFile(c) as a string.
func settingsText(t *testing.T, c *cluster.Config) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteFile(&b, c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// readBack applies text onto the standard configuration and resolves it.
func readBack(t *testing.T, where, text string) cluster.Config {
	t.Helper()
	c := CheckBase()
	if _, err := ApplyFile("s.yaml", []byte(text), &c); err != nil {
		t.Fatalf("%s: the written settings do not read back: %v\n%s", where, err, text)
	}
	if err := CheckConfig(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// The weighted profile keeps its order through a file (the order fixes
// the float sums, hence ties), whatever the keys' order; a setting
// without effect is a comment saying why; an unset per-class setting a
// comment saying what unset means.
func TestSettingsFileKeepsTheProfileOrderAndCommentsTheRest(t *testing.T) {
	c := CheckBase()
	c.Routing.Policy = "weighted"
	c.Routing.Scorers = []route.ScorerWeight{{Name: "token-load", Weight: 1.5}, {Name: "queue-depth", Weight: 2}, {Name: "kv-utilization", Weight: 0.25}}
	if err := CheckConfig(&c); err != nil {
		t.Fatal(err)
	}
	text := settingsText(t, &c)
	tl, qd, kv := strings.Index(text, "\nrouting.weight.token-load: 1.5\n"), strings.Index(text, "\nrouting.weight.queue-depth: 2\n"), strings.Index(text, "\nrouting.weight.kv-utilization: 0.25\n")
	if tl < 0 || qd < tl || kv < qd {
		t.Fatalf("the profile is not in its order (token-load %d, queue-depth %d, kv-utilization %d):\n%s", tl, qd, kv, text)
	}
	if !strings.Contains(text, "\nrouting.weight.prefix-affinity: 0\n") {
		t.Errorf("a scorer outside the profile is not weight 0:\n%s", text)
	}
	back := readBack(t, "profile", text)
	if !slices.Equal(back.Routing.Scorers, c.Routing.Scorers) {
		t.Errorf("profile read back as %v, want %v", back.Routing.Scorers, c.Routing.Scorers)
	}
	if !strings.Contains(text, "(no effect unless kv.cpu_blocks > 0)\n") || strings.Contains(text, "\nkv.offload_threshold:") {
		t.Errorf("kv.offload_threshold is given without a CPU tier, or its comment does not say why:\n%s", text)
	}
	if !strings.Contains(text, "# slo.ttft_target_ms.critical: unset (the workload's, else none)\n") {
		t.Errorf("an unset target is not a comment saying what unset means:\n%s", text)
	}
	if !strings.Contains(text, "\nscheduler: fcfs\n") || !strings.Contains(text, "\nmodel: ") {
		t.Errorf("a setting in effect is not a line:\n%s", text)
	}
}

// Mistakes in a settings file are one line naming the file, the line and
// the key, in the words --set and templates use.
func TestSettingsFileErrorsNameFileLineAndKey(t *testing.T) {
	for text, want := range map[string]string{
		"scheduler: fcfs\nnum_instances: many\n": `s.yaml: line 2: num_instances: "many" is not a number (allowed: whole numbers in [1, 4096])`,
		"schedulr: fcfs\n":                       `s.yaml: line 1: unknown setting "schedulr" (settings: `,
		"scheduler: lifo\n":                      `s.yaml: line 1: scheduler: "lifo" is not allowed (allowed: `,
		"kv.offload_threshold: 0.5\n":            "s.yaml: line 1 sets kv.offload_threshold, which has no effect unless kv.cpu_blocks > 0 (it is 0)",
		"scheduler: fcfs\nscheduler: sjf\n":      "s.yaml: line 2: scheduler is also given on line 1; give it once",
		"scheduler: [fcfs]\n":                    "s.yaml: line 1: scheduler: expected a single value",
		"- scheduler\n":                          "s.yaml: line 1: expected key: value lines",
		"# nothing\n":                            "s.yaml: no settings",
		"routing.policy: weighted\nrouting.weight.queue-depth: 0\n": "s.yaml: routing: every routing.weight.* is 0; the weighted policy with routing.picker blis needs a scorer",
	} {
		c := CheckBase()
		_, err := ApplyFile("s.yaml", []byte(text), &c)
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want one line starting %q", text, err, want)
		}
	}
}

// A setting the file gives where it has no effect is accepted when it
// restates the value it has anyway, as a flag is (CheckGiven): a file
// spelling out the defaults runs; the same key at another value does not.
func TestSettingsFileMayRestateAnInertDefault(t *testing.T) {
	c := CheckBase()
	if _, err := ApplyFile("s.yaml", []byte("scheduler: fcfs\nkv.offload_threshold: 0.9\n"), &c); err != nil {
		t.Fatalf("the default offload threshold without a CPU tier: %v", err)
	}
	c = CheckBase()
	if _, err := ApplyFile("s.yaml", []byte("kv.offload_threshold: 0.5\n"), &c); err == nil || !strings.Contains(err.Error(), "no effect unless kv.cpu_blocks > 0") {
		t.Fatalf("a non-default offload threshold without a CPU tier: %v", err)
	}
}
