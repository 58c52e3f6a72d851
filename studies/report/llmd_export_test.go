package report

import (
	"bytes"
	"strings"
	"testing"

	"optimize/internal/testkit"
	"optimize/strategies/production"
	"optimize/strategies/settings"
)

// mappingRows reads MAPPING.md's table: the fidelity word of each row by
// setting key.
func mappingRows(text string) map[string]string {
	rows := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if keys, ok := strings.CutPrefix(line, zeroWeightLine+" "); ok {
			for _, k := range strings.Split(strings.TrimSuffix(keys, "."), ", ") {
				rows[strings.Trim(k, "`")] = "exact"
			}
			continue
		}
		cells := strings.Split(line, " | ")
		if len(cells) != 4 || !strings.HasPrefix(cells[0], "| `") {
			continue
		}
		key := strings.Trim(strings.TrimPrefix(cells[0], "| "), "`")
		how, _, _ := strings.Cut(strings.TrimSuffix(cells[3], " |"), ":")
		rows[key] = how
	}
	return rows
}

// For every shipped template at its defaults, MAPPING.md has a row for
// every setting in effect (the settings file's key: value lines, an
// independent list) and its verdict names each row that is approximated
// or has no counterpart, and no other. The baseline's names its two BLIS
// scorers, which are not llm-d's queue-scorer and prefix-cache-scorer.
func TestMappingNamesEverySettingThatBlocksExactness(t *testing.T) {
	reg, base := testkit.Builtins(t)
	for _, tpl := range reg.Templates() {
		c, err := tpl.Config(base, tpl.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		writeMappingTable(&b, production.CarriedSettings(&c))
		text := b.String()
		summary, _, _ := strings.Cut(text, "\n")
		rows := mappingRows(text)
		settings := settings.Map(&c)
		if len(rows) != len(settings) || len(rows) < 30 {
			t.Errorf("%s: %d rows for %d settings in effect", tpl.Name, len(rows), len(settings))
		}
		blocked := 0
		for key := range settings {
			how, ok := rows[key]
			switch {
			case !ok:
				t.Errorf("%s: no row for %s", tpl.Name, key)
			case how == "approximated" || how == "no counterpart":
				blocked++
				if !strings.Contains(summary, " "+key+",") && !strings.Contains(summary, " "+key+".") {
					t.Errorf("%s: %s is %s but the verdict does not name it: %s", tpl.Name, key, how, summary)
				}
			case how != "exact" && how != "world":
				t.Errorf("%s: %s classified %q", tpl.Name, key, how)
			}
		}
		if blocked == 0 != strings.HasPrefix(summary, "Exported exactly") {
			t.Errorf("%s: %d blocking rows, verdict %q", tpl.Name, blocked, summary)
		}
		if tpl.Name == "baseline" {
			for _, key := range []string{"routing.weight.queue-depth", "routing.weight.prefix-affinity"} {
				if !strings.Contains(summary, key) {
					t.Errorf("baseline: the verdict does not name %s: %s", key, summary)
				}
			}
		}
	}
}
