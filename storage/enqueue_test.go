package storage

import (
	"math"
	"testing"
	"time"
)

// Enqueued vectors are claimed oldest first, each once, with the claim's
// trial holding their params; a rescue goes before them; the total grows
// only when the study has no trial left for a vector.
func TestEnqueuedVectorsAreClaimedOnceInOrder(t *testing.T) {
	st := openTemp(t)
	row := newStudy(t, st, 3)
	dead, _ := st.ClaimTrial(row, "dead", time.Minute, nil)
	if err := st.SetProposal(dead.Trial, 1, []float64{9, 9}); err != nil {
		t.Fatal(err)
	}
	a, b := []float64{1, math.NaN()}, []float64{2, 0.5}
	for i, v := range [][]float64{a, b} {
		q, err := st.Enqueue(row, v)
		if err != nil || q.Position != i+1 || q.TrialsTotal != 3 {
			t.Fatalf("enqueue %d: %+v %v, want position %d, total 3", i, q, err, i+1)
		}
	}
	if pending, _ := st.Enqueued(row.ID); len(pending) != 2 || pending[0][0] != 1 || !math.IsNaN(pending[0][1]) {
		t.Fatalf("queue %v, want a then b", pending)
	}
	gone := func(owner string) bool { return owner != "dead" }
	want := []struct {
		params   []float64
		enqueued bool
	}{{[]float64{9, 9}, false}, {a, true}, {b, true}}
	for i, w := range want {
		c, err := st.ClaimTrial(row, "w", time.Minute, gone)
		if err != nil || c.Trial == nil {
			t.Fatalf("claim %d: %+v %v", i, c, err)
		}
		if c.Enqueued != w.enqueued || len(c.Rescue) != 2 || c.Rescue[0] != w.params[0] {
			t.Errorf("claim %d: rescue %v enqueued %v, want %v %v", i, c.Rescue, c.Enqueued, w.params, w.enqueued)
		}
		if err := st.Complete(c.Trial, Outcome{Score: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if pending, _ := st.Enqueued(row.ID); len(pending) != 0 {
		t.Errorf("%d vectors still queued after their claims", len(pending))
	}
	// The study is finished (3 of 3): a vector grows the total by one.
	if q, err := st.Enqueue(row, a); err != nil || q.TrialsTotal != 4 || row.TrialsTotal != 4 {
		t.Fatalf("enqueue on a finished study: %+v %v, want total 4", q, err)
	}
	if c, _ := st.ClaimTrial(row, "w", time.Minute, nil); c.Trial == nil || !c.Enqueued {
		t.Fatalf("the grown total's trial was not the enqueued vector: %+v", c)
	}
	if c, _ := st.ClaimTrial(row, "w", time.Minute, nil); c.Trial != nil {
		t.Errorf("a claim beyond the grown total: %+v", c)
	}
}
