package plot

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
)

// The HTML report's tables give every metric its unit and print numbers
// in range without scientific notation; the axis labels carry the unit.
func TestHTMLTablesHaveUnitsAndPlainNumbers(t *testing.T) {
	r, _ := studykit.SyntheticReport(t, "slo-cascade", 12)
	r.Baseline.TokensPerSec = 17684.3 // %.4g would print 1.768e+04
	var buf bytes.Buffer
	if err := HTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := regexp.MustCompile(`(?s)<svg.*?</svg>`).ReplaceAllString(buf.String(), "")
	for _, want := range []string{"<td>tokens/s</td>", "<td>ms</td>", "<td>ratio</td>", `<td class="num">17684</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the report's tables lack %q", want)
		}
	}
	for _, cell := range regexp.MustCompile(`<td[^>]*>([^<]*)</td>`).FindAllStringSubmatch(page, -1) {
		if regexp.MustCompile(`\de[+-]\d`).MatchString(cell[1]) {
			t.Errorf("a table cell prints %q in scientific notation", cell[1])
		}
	}
	if got := objectiveLabel(r.Template.Objectives[3]); got != "slo_gap (ratio, higher is better)" {
		t.Errorf("slo_gap's axis label %q", got)
	}
}
