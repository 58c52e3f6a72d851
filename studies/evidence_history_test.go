package studies_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"optimize/internal/testkit"
	"optimize/internal/testkit/studykit"
	"optimize/studies"
	"optimize/studies/report"
)

// loadEvidence reads study name's report with its stored evidence.
func loadEvidence(t *testing.T, env *studies.Env, name string) *report.Report {
	t.Helper()
	r, err := report.Load(env.Store, env.Registry, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.LoadEvidence(r); err != nil {
		t.Fatal(err)
	}
	if r.EvidenceError != "" {
		t.Fatalf("evidence error: %s", r.EvidenceError)
	}
	return r
}

// kinds lists the kinds of r's latest validations.
func kinds(r *report.Report) []report.EvidenceKind {
	var out []report.EvidenceKind
	for _, v := range r.Validations {
		out = append(out, v.Kind)
	}
	return out
}

// The release database has no evidence tables: its study shows none, and
// then keeps a regimes validation beside a later Pareto one.
func TestEvidenceKeptOnTheReleaseDatabase(t *testing.T) {
	env := studykit.Env(t, testkit.ReleaseSQLite(t), 2)
	if r := loadEvidence(t, env, "old"); r.Validation != nil || r.Ablation != nil || len(r.EvidenceRuns) != 0 {
		t.Fatalf("the release study shows evidence before any: %+v", r.EvidenceRuns)
	}
	ctx := context.Background()
	if _, err := env.Validate(ctx, "old", studies.ValidateOptions{Trial: -1, Seeds: []int64{100, 101}, Regimes: []string{"rate-0.5x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Validate(ctx, "old", studies.ValidateOptions{Pareto: true, Seeds: []int64{200, 201}}); err != nil {
		t.Fatal(err)
	}
	r := loadEvidence(t, env, "old")
	if got := kinds(r); !slices.Equal(got, []report.EvidenceKind{report.KindRegimes, report.KindPareto}) {
		t.Fatalf("latest validations %v, want the regimes' and the Pareto one", got)
	}
	if rg := r.Validations[0]; len(rg.Regimes) != 1 || rg.Regimes[0].Name != "rate-0.5x" || rg.Missing != 0 {
		t.Errorf("the regimes' result: %+v", rg)
	}
	if r.Validation != r.Validations[1] || len(r.EvidenceRuns) != 2 {
		t.Errorf("latest %v, %d runs listed; want the Pareto one and 2", r.Validation.Kind, len(r.EvidenceRuns))
	}
}

// A database whose evidence table the previous release made (a unique
// index on study and kind, one request per kind) keeps its request: it
// shows, a later validation of another kind is stored beside it, and
// running the previous request again moves it rather than adding a copy.
func TestEvidenceOfThePreviousReleaseIsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	env := studykit.Env(t, path, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "p", 6))
	r := loadEvidence(t, env, "p")
	best := r.Complete[r.Best].Number

	// The previous release's table, as it made it on SQLite, and its row.
	db := testkit.DB(t, path)
	ran := time.Now().Add(-time.Hour).UTC()
	previous := fmt.Sprintf(`{"seeds":[100,101],"trials":[%d],"regimes":["rate-0.5x"]}`, best)
	for _, stmt := range []string{
		"CREATE TABLE `evidence_rows` (`id` integer PRIMARY KEY AUTOINCREMENT,`study_id` integer NOT NULL,`kind` text NOT NULL,`request` text NOT NULL,`updated_at` datetime)",
		"CREATE UNIQUE INDEX `idx_evidence_kind` ON `evidence_rows`(`study_id`,`kind`)",
	} {
		if err := db.Exec(stmt).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Exec("INSERT INTO evidence_rows (study_id, kind, request, updated_at) VALUES (?, 'validation', ?, ?)", r.Study.ID, previous, ran).Error; err != nil {
		t.Fatal(err)
	}

	r = loadEvidence(t, env, "p")
	if got := kinds(r); !slices.Equal(got, []report.EvidenceKind{report.KindRegimes}) || !r.Validation.RanAt.Equal(ran) {
		t.Fatalf("the previous release's request: kinds %v, ran %v; want regimes, ran %v", got, r.Validation.RanAt, ran)
	}
	ctx := context.Background()
	if _, err := env.Validate(ctx, "p", studies.ValidateOptions{Pareto: true, Seeds: []int64{200, 201}}); err != nil {
		t.Fatalf("a second validation beside the previous release's: %v", err)
	}
	if _, err := env.Ablate(ctx, "p", -1); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Validate(ctx, "p", studies.ValidateOptions{Trial: best, Seeds: []int64{100, 101}, Regimes: []string{"rate-0.5x"}}); err != nil {
		t.Fatal(err)
	}
	r = loadEvidence(t, env, "p")
	var listed []report.EvidenceKind
	for _, run := range r.EvidenceRuns {
		listed = append(listed, run.Kind)
	}
	// The regimes request ran again last: it moves to the end, once.
	if want := []report.EvidenceKind{report.KindPareto, report.KindAblation, report.KindRegimes}; !slices.Equal(listed, want) {
		t.Errorf("runs listed %v, want %v", listed, want)
	}
	if got := kinds(r); !slices.Equal(got, []report.EvidenceKind{report.KindRegimes, report.KindPareto}) {
		t.Errorf("latest validations %v", got)
	}
	if rg := r.Validations[0]; rg.Missing != 0 || !rg.RanAt.After(ran) || r.Validation != rg {
		t.Errorf("the regimes' validation run again: %d missing, ran %v (was %v), latest %v", rg.Missing, rg.RanAt, ran, r.Validation.Kind)
	}
	if r.Ablation == nil || r.Ablation.RanAt == nil {
		t.Errorf("the ablation is not shown with when it ran: %+v", r.Ablation)
	}
}
