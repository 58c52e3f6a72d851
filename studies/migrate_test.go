package studies_test

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"optimize/internal/pgtest"
	"optimize/internal/testkit"
	"optimize/internal/testkit/studykit"
	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/storage"
	"optimize/studies"
	"optimize/studies/report"
)

// The release databases (testkit.ReleaseSQLite, testkit.ReleasePostgres)
// were written by the release before violations were stored.

func TestMigrateReleaseSQLite(t *testing.T) {
	path := testkit.ReleaseSQLite(t)
	checkMigratedRelease(t, studykit.Env(t, path, 1))
}

func TestMigrateReleasePostgres(t *testing.T) {
	dsn := pgtest.DB(t)
	db, err := gorm.Open(postgres.Open(dsn), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for stmt := range bytes.SplitSeq(testkit.ReleasePostgres(t), []byte(";\n")) {
		var lines []string // the statement without pg_dump's comment lines
		for line := range strings.SplitSeq(string(stmt), "\n") {
			if !strings.HasPrefix(line, "--") {
				lines = append(lines, line)
			}
		}
		if s := strings.TrimSpace(strings.Join(lines, "\n")); s != "" {
			if err := db.Exec(s).Error; err != nil {
				t.Fatalf("restore: %v\n%s", err, s)
			}
		}
	}
	// The dump keeps no setval lines: each sequence is moved past its
	// table's rows, so that new studies (checkMigratedRelease creates one)
	// get new ids.
	if err := db.Exec(advanceSequences).Error; err != nil {
		t.Fatal(err)
	}
	if sql, err := db.DB(); err == nil {
		sql.Close()
	}
	checkMigratedRelease(t, studykit.Env(t, dsn, 1))
}

// advanceSequences sets every sequence owned by a column to follow the
// column's largest value.
const advanceSequences = `DO $$ DECLARE r record; BEGIN
FOR r IN SELECT s.relname AS seq, t.relname AS tab, a.attname AS col FROM pg_class s
  JOIN pg_depend d ON d.objid = s.oid AND d.deptype = 'a' JOIN pg_class t ON d.refobjid = t.oid
  JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid WHERE s.relkind = 'S' LOOP
  EXECUTE format('SELECT setval(%L, COALESCE((SELECT MAX(%I) FROM %I), 0) + 1, false)', r.seq, r.col, r.tab);
END LOOP; END $$`

// checkMigratedRelease reads the old release's study before and after
// Migrate: before, its violations are computed in memory; after, they are
// stored, every trial is judged, scores and the show document are
// unchanged, and feasibility agrees with the old release's (the score
// above the primary ratio alone by more than 1e-9, so 1e-12 of violation).
// releaseConstraints is how many constraints joint-slo had in the release
// (tokens/s and the critical and standard completed fractions); issue 42
// appended a bound on each class's SLO attainment.
const releaseConstraints = 3

func checkMigratedRelease(t *testing.T, env *studies.Env) {
	t.Helper()
	before, err := report.Load(env.Store, env.Registry, "old")
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Backfill()) != 8 {
		t.Fatalf("%d trials judged in memory before the migration, want 8", len(before.Backfill()))
	}
	checkSeedsWorld(t, before)
	if err := env.Migrate(); err != nil {
		t.Fatal(err)
	}
	if names, err := env.Store.Unjudged(); err != nil || len(names) != 0 {
		t.Fatalf("after the migration, studies still to back-fill: %v, %v", names, err)
	}
	after, err := report.Load(env.Store, env.Registry, "old")
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Backfill()) != 0 || len(after.Complete) != 8 {
		t.Fatalf("after the migration %d trials judged in memory, %d complete; want 0 and 8", len(after.Backfill()), len(after.Complete))
	}
	checkSeedsWorld(t, after)
	checkNewStudyRecordsItsWorld(t, env)
	var feasible []bool
	for i := range after.Complete {
		c, b := &after.Complete[i], &before.Complete[i]
		feasible = append(feasible, search.Feasible(c.Violation))
		e := after.Evaluation(c)
		oldPenalty := c.Score - search.Score(e.Ratios[e.Primary], 0, 0)
		// The release judged joint-slo by its first releaseConstraints
		// constraints; the class bounds added since judge the stored
		// metrics too, but its stored score's penalty is from those.
		released := e
		released.Violations = c.Violations[:releaseConstraints]
		if c.Score != b.Score || c.Violation != b.Violation || !slices.Equal(c.Violations, b.Violations) ||
			math.Abs(oldPenalty-search.DefaultViolationWeight*released.Violation()) > 1e-9 || math.Abs(released.Score(0)-c.Score) > 1e-9 {
			t.Fatalf("trial %d: score %v (in memory %v), violation %v (in memory %v), old penalty %v",
				c.Number, c.Score, b.Score, c.Violation, b.Violation, oldPenalty)
		}
		if !search.Feasible(c.Violation) && c.Violation < 0.01 {
			t.Fatalf("trial %d misses the constraint by only %v", c.Number, c.Violation)
		}
	}
	if !slices.Equal(feasible, testkit.ReleaseFeasible) {
		t.Fatalf("feasible %v, want %v", feasible, testkit.ReleaseFeasible)
	}
	// The history line starts at the first feasible trial and never rises.
	best := after.BestFeasibleSoFar()
	if !math.IsNaN(best[5]) || best[6] != after.Complete[6].Objectives[0] || best[7] != best[6] {
		t.Fatalf("best feasible so far %v: NaN to trial 5, then trial 6's %v", best, after.Complete[6].Objectives[0])
	}
	if bj, aj := before.JSON(), after.JSON(); bj.Best.Trial != aj.Best.Trial || aj.Best.Violates != "" || aj.Hypervolume != bj.Hypervolume {
		t.Fatalf("show before and after the migration: best %d and %d (misses %q), hypervolume %v and %v",
			bj.Best.Trial, aj.Best.Trial, aj.Best.Violates, bj.Hypervolume, aj.Hypervolume)
	}
}

// A worker of this release on a database of the previous one, not
// migrated (workers do not migrate): it claims, runs and completes trials
// (the rows without the columns the database lacks), and a report judges
// every trial in memory, the new ones too.
func TestWorkerOnAnUnmigratedRelease(t *testing.T) {
	path := testkit.ReleaseSQLite(t)
	if err := testkit.DB(t, path).Exec("UPDATE study_rows SET trials_total = 10 WHERE name = 'old'").Error; err != nil {
		t.Fatal(err)
	}
	env := studykit.Env(t, path, 1)
	row, err := env.Store.StudyByName("old")
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Run(context.Background(), row); err != nil {
		t.Fatal(err)
	}
	r, err := report.Load(env.Store, env.Registry, "old")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Complete) != 10 || len(r.Backfill()) != 10 {
		t.Fatalf("%d complete trials, %d judged in memory; want 10 and 10", len(r.Complete), len(r.Backfill()))
	}
	for i, want := range testkit.ReleaseFeasible {
		if got := search.Feasible(r.Complete[i].Violation); got != want {
			t.Fatalf("trial %d: feasible %v, want %v", i, got, want)
		}
	}
}

// Migrate leaves a study whose template is not loaded (a user template
// from another --templates-dir) for later and says so, and back-fills the
// others: one unknown template does not stop create, resume or serve.
func TestMigrateSkipsAStudyOfAnUnknownTemplate(t *testing.T) {
	path := testkit.ReleaseSQLite(t)
	if err := testkit.DB(t, path).Exec("UPDATE study_rows SET template = 'mine' WHERE name = 'old'").Error; err != nil {
		t.Fatal(err)
	}
	env := studykit.Env(t, path, 1)
	var said strings.Builder
	env.Progress = &said
	if err := env.Migrate(); err != nil {
		t.Fatal(err)
	}
	if names, err := env.Store.Unjudged(); err != nil || len(names) != 1 || !strings.Contains(said.String(), `study old: violations not back-filled yet: unknown template "mine"`) {
		t.Fatalf("unjudged %v (%v); said %q", names, err, said.String())
	}
}

// checkSeedsWorld: the release's study, stored before studies recorded
// their world, reads as the seeds' world (llama-3.1-8b on H100, TP2,
// blackbox, the profile's KV blocks; joint-slo's 8 instances, which
// sustained-overload keeps), said to be assumed.
func checkSeedsWorld(t *testing.T, r *report.Report) {
	t.Helper()
	want := cluster.World{Model: "meta-llama/llama-3.1-8b-instruct", GPU: "H100", TP: 2, LatencyModel: "blackbox", Instances: 8, KVBlocks: 132139}
	if r.World != want || !r.WorldAssumed || r.Study.World != nil {
		t.Fatalf("world %+v (assumed %v, stored %v), want the seeds' %+v, assumed", r.World, r.WorldAssumed, r.Study.World, want)
	}
	if js := r.JSON(); js.World.World != want || !js.WorldAssumed || !strings.Contains(js.World.Line, "on H100, TP2, blackbox") {
		t.Fatalf("show's world %+v, assumed %v", js.World, js.WorldAssumed)
	}
}

// checkNewStudyRecordsItsWorld: in the migrated release database a new
// study of a template in another world records that world (the column
// the migration added), and reads it back as recorded, not assumed.
func checkNewStudyRecordsItsWorld(t *testing.T, env *studies.Env) {
	t.Helper()
	testkit.AddWorldTemplate(t, env.Registry)
	o := studykit.Study(testkit.WorldTemplateName, "qwen", 1)
	o.Seeds = []int64{42}
	row, err := env.Create(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if row.World == nil || row.World.Model != "qwen/qwen3-14b" || row.World.LatencyModel != "trained-physics" || row.World.Instances != 4 {
		t.Fatalf("created with world %+v", row.World)
	}
	r, err := report.Load(env.Store, env.Registry, "qwen")
	if err != nil {
		t.Fatal(err)
	}
	if r.WorldAssumed || r.World != *row.World || r.World.KVBlocks < 1000 {
		t.Fatalf("read back: %+v (assumed %v), want %+v as recorded", r.World, r.WorldAssumed, *row.World)
	}
	checkNewStudyKeepsItsBaselineConfigs(t, env)
}

// After the migration a study keeps the production configs its baseline
// ran with (study create --baseline-vllm-args), and the old study reads
// as a template baseline.
func checkNewStudyKeepsItsBaselineConfigs(t *testing.T, env *studies.Env) {
	t.Helper()
	o := studykit.Study("round-robin", "from-production", 1)
	o.Seeds = []int64{42}
	o.BaselineFrom = []storage.ConfigFile{{Kind: "vllm-args", Path: "args.txt", Data: "--max-num-seqs 32\n"}}
	if _, err := env.Create(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	r, err := report.Load(env.Store, env.Registry, "from-production")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Study.BaselineFrom) != 1 || r.Study.BaselineFrom[0] != o.BaselineFrom[0] {
		t.Fatalf("baseline configs read back %+v, want %+v", r.Study.BaselineFrom, o.BaselineFrom)
	}
	old, err := report.Load(env.Store, env.Registry, "old")
	if err != nil {
		t.Fatal(err)
	}
	if old.Study.BaselineFrom != nil || old.BaselineFrom() != nil {
		t.Fatalf("the old study's baseline configs: %+v", old.Study.BaselineFrom)
	}
}
