package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recordTB records Skip and Fatal instead of ending the test, so that
// SharedData's choice between them can be checked.
type recordTB struct {
	testing.TB
	skipped, failed string
}

func (r *recordTB) Helper()           {}
func (r *recordTB) Skip(args ...any)  { r.skipped = fmt.Sprint(args...) }
func (r *recordTB) Fatal(args ...any) { r.failed = fmt.Sprint(args...) }

// A missing shared folder skips the test, saying where it looked, except
// under CI ($CI set), where it fails it; $OPTIMIZE_SHARED_DATA moves the
// folder.
func TestSharedDataSkipsOrFails(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "llm-d", "deploy-config"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(SharedDataEnv, root)
	t.Setenv("CI", "")
	r := &recordTB{TB: t}
	if got := SharedData(r, "llm-d/deploy-config"); got != filepath.Join(root, "llm-d", "deploy-config") || r.skipped != "" || r.failed != "" {
		t.Errorf("present: %q, skipped %q, failed %q", got, r.skipped, r.failed)
	}
	r = &recordTB{TB: t}
	SharedData(r, "sim2real")
	if !strings.Contains(r.skipped, `shared test data "sim2real" not found`) || !strings.Contains(r.skipped, SharedDataEnv) || r.failed != "" {
		t.Errorf("missing, not under CI: skipped %q, failed %q", r.skipped, r.failed)
	}
	t.Setenv("CI", "true")
	r = &recordTB{TB: t}
	SharedData(r, "sim2real")
	if !strings.Contains(r.failed, "$CI is set") || r.skipped != "" {
		t.Errorf("missing under CI: skipped %q, failed %q", r.skipped, r.failed)
	}
}

// Without $OPTIMIZE_SHARED_DATA the shared data is ../shared/data beside
// the module's folder.
func TestSharedDataBesideTheModule(t *testing.T) {
	t.Setenv(SharedDataEnv, "")
	root, err := sharedRoot()
	if err != nil {
		t.Fatal(err)
	}
	module, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(module, "..", "shared", "data"); root != want {
		t.Errorf("shared data at %s, want %s", root, want)
	}
}
