package strategies

import (
	"bytes"
	"strings"
	"testing"

	"optimize/simcore/cluster"
	"optimize/strategies/settings"
)

// settingsText is settings.WriteFile(c) as a string.
func settingsText(t *testing.T, c *cluster.Config) string {
	t.Helper()
	var b bytes.Buffer
	if err := settings.WriteFile(&b, c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// readBack applies text onto the standard configuration and checks it.
func readBack(t *testing.T, where, text string) cluster.Config {
	t.Helper()
	c := settings.CheckBase()
	if _, err := settings.ApplyFile("s.yaml", []byte(text), &c); err != nil {
		t.Fatalf("%s: the written settings do not read back: %v\n%s", where, err, text)
	}
	if err := settings.CheckConfig(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// Every built-in template at every point its load-time check probes
// (combinations of its choices, each number at either end) writes a
// settings file that reads back onto the standard configuration as the
// same configuration: written again, it gives the same settings, in the
// same order, and the same settings have no effect (those may hold other
// values: the file leaves them out). Every key of the table is in the
// file, as a line or as a comment.
func TestSettingsFileReadsBackAsTheSameConfiguration(t *testing.T) {
	reg, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	points := 0
	for _, tpl := range reg.Templates() {
		probes, err := tpl.probes()
		if err != nil {
			t.Fatal(err)
		}
		// Every step-th probe: every template's choices and ends, in a
		// second rather than in ten.
		step := max(1, len(probes)/60)
		for i := 0; i < len(probes); i += step {
			pr := probes[i]
			c, _, err := tpl.apply(settings.CheckBase(), pr.values)
			if err != nil {
				continue // a combination of ends the simulator rejects: no trial runs it
			}
			where := tpl.Name + tpl.probeText(pr)
			text := settingsText(t, &c)
			back := readBack(t, where, text)
			if got, want := givenLines(&back), givenLines(&c); got != want {
				t.Fatalf("%s: read back, the settings differ:\n%s\nwant\n%s", where, got, want)
			}
			points++
		}
		// Every key once, as a line or a comment.
		text := settingsText(t, mustConfig(t, tpl))
		for _, s := range settings.All() {
			if n := strings.Count(text, "\n"+s.Key+": ") + strings.Count(text, "# "+s.Key+": "); n+boolToInt(strings.HasPrefix(text, s.Key+": ")) != 1 {
				t.Fatalf("%s: key %s appears %d times in\n%s", tpl.Name, s.Key, n, text)
			}
		}
	}
	if points < 100 {
		t.Fatalf("%d points checked, want at least 100", points)
	}
}

// givenLines is the settings file of c with the comments' values left
// out: the settings given, and which have no effect or are unset.
func givenLines(c *cluster.Config) string {
	var b strings.Builder
	for _, l := range settings.Lines(c) {
		if l.Given() {
			b.WriteString(l.Text())
		} else {
			b.WriteString("# " + l.Setting.Key + " " + l.Inert)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func mustConfig(t *testing.T, tpl *Template) *cluster.Config {
	t.Helper()
	c, err := tpl.Config(settings.CheckBase(), tpl.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	return &c
}
