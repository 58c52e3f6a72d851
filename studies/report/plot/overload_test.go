package plot

import (
	"testing"

	"optimize/internal/testkit"
	"optimize/storage"
	"optimize/studies/report"
)

// The history plot of a sustained-overload joint-slo study whose first
// six trials miss the tokens/s constraint (testkit's release database,
// written by the release before violations were stored). That release drew a "best
// so far (lowest score)" line that rose from trial 1's 1,614 ms to trial
// 6's 4,056 ms when the best score passed from an infeasible trial to a
// feasible one; the best-feasible line starts at trial 6 and never rises.
func TestHistoryOfAnOverloadStudyNeverRises(t *testing.T) {
	st, err := storage.Open(testkit.ReleaseSQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reg, _ := testkit.Builtins(t)
	r, err := report.Load(st, reg, "old")
	if err != nil {
		t.Fatal(err)
	}
	feasible, infeasible, incumbent := historyMarks(r)
	if len(infeasible) != 6 || len(feasible) != 2 || len(incumbent) != 2 || incumbent[0].X != 6 {
		t.Fatalf("%d infeasible and %d feasible marks, line of %d points from trial %v; want 6, 2 and 2 from trial 6",
			len(infeasible), len(feasible), len(incumbent), incumbent[0].X)
	}
	if incumbent[1].Y > incumbent[0].Y || incumbent[0].Y < 4000 || incumbent[0].Y > 4100 {
		t.Fatalf("line %v: want trial 6's 4,056 ms, never rising", incumbent)
	}
	if _, err := History(r); err != nil {
		t.Fatal(err)
	}
}
