package studies

import (
	"os"
	"testing"
)

func TestZZProfile(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	runTemplateStudy(t, testEnv(t, 2), "slo-cascade", os.Getenv("ZZ"), 1, 1000)
}
