package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"optimize/internal/testkit"
	"optimize/simcore/workload"
)

func TestWorkloadListShowsSpecsAndTraces(t *testing.T) {
	testkit.Datasets(t)
	code, out, errOut := run(t, "workload", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"orthogonal-slo", "steady-chat", "mooncake-conversation", "azure-conv-2023"} {
		if !strings.Contains(out, name) {
			t.Errorf("workload list has no %s:\n%s", name, out)
		}
	}
	if !strings.Contains(out, "12031") || !strings.Contains(out, "3537 s") {
		t.Errorf("workload list gives no size and span of the Mooncake trace:\n%s", out)
	}
}

func TestWorkloadInspectJSONAndPlots(t *testing.T) {
	testkit.Datasets(t)
	dir := t.TempDir()
	code, out, errOut := run(t, "workload", "inspect", "mooncake-conversation", "--output", "json", "--plot", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Requests int     `json:"requests"`
		SpanS    float64 `json:"span_s"`
		Reuse    *struct {
			ByBlocks float64 `json:"by_blocks"`
		} `json:"prefix_reuse"`
		Windows []json.RawMessage `json:"windows"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Requests != 12031 || got.Reuse == nil || got.Reuse.ByBlocks < 0.36 || got.Reuse.ByBlocks > 0.37 || len(got.Windows) != 59 {
		t.Fatalf("inspect: %+v", got)
	}
	for _, kind := range []string{"rate", "lengths", "reuse"} {
		for _, ext := range []string{"png", "svg"} {
			info, err := os.Stat(filepath.Join(dir, "mooncake-conversation-"+kind+"."+ext))
			if err != nil || info.Size() < 2_000 {
				t.Errorf("%s.%s: %v", kind, ext, err)
			}
		}
	}
	// A trace without prefix identity says so, and draws no reuse.
	code, out, _ = run(t, "workload", "inspect", "azure-conv-2023")
	if code != 0 || !strings.Contains(out, "prefix reuse       none") || !strings.Contains(out, "19366") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// A built-in synthetic workload is measured on its generated requests.
	code, out, _ = run(t, "workload", "inspect", "steady-chat")
	if code != 0 || !strings.Contains(out, "requests           4000") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, _, errOut = run(t, "workload", "inspect", "no-such-workload")
	if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "mooncake-conversation") {
		t.Fatalf("unknown workload: exit %d, %q", code, errOut)
	}
}

func TestWorkloadFitWritesASpecThatPasses(t *testing.T) {
	testkit.Datasets(t)
	spec := filepath.Join(t.TempDir(), "azure.yaml")
	code, out, errOut := run(t, "workload", "fit", "azure-conv-2023", "-o", spec)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "fitted spec: PASS; Poisson at the mean rate: FAIL") || !strings.Contains(out, "KS") {
		t.Fatalf("fit report:\n%s", out)
	}
	s, err := workload.LoadSpecFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Clients) < 50 || s.Clients[0].Arrival.Process != "gamma" {
		t.Fatalf("fitted spec: %d clients, arrival %+v", len(s.Clients), s.Clients[0].Arrival)
	}
}
