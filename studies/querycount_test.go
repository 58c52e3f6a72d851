package studies

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"optimize/internal/pgtest"
	"optimize/search"
	"optimize/storage"
)

// Asking, claiming and completing a trial issue the same number of
// database statements whether the study holds 100 trials or 5,000, on
// SQLite and on PostgreSQL: nothing reloads the study per trial.
func TestQueriesPerTrialDoNotGrowWithTheStudy(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 5,100 trials")
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			counts := map[int]int64{}
			for _, size := range []int{100, 5000} {
				dsn := filepath.Join(t.TempDir(), "q.db")
				if backend == "postgres" {
					dsn = pgtest.DB(t)
				}
				counts[size] = queriesForThreeTrials(t, dsn, size)
			}
			t.Logf("%s: statements for 3 trials after 100: %d, after 5,000: %d", backend, counts[100], counts[5000])
			if counts[100] != counts[5000] {
				t.Fatalf("%s: 3 trials took %d statements after 100 trials and %d after 5,000", backend, counts[100], counts[5000])
			}
			if counts[100] == 0 {
				t.Fatal("no statements counted")
			}
		})
	}
}

// queriesForThreeTrials creates a slo-cascade TPE study, fills it with
// size complete trials, and counts the statements one worker issues
// running it to size+3.
func queriesForThreeTrials(t *testing.T, dsn string, size int) int64 {
	env := testEnvAt(t, dsn, 1)
	st := env.Store
	ctx := context.Background()
	row, err := env.Create(ctx, CreateOptions{Template: "slo-cascade", Name: "q", Trials: size + 3,
		Seeds: []int64{42, 43, 44}, Sampler: "tpe", SamplerSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	fillTrials(t, env, row, size)
	var n atomic.Int64
	countStatements(t, st.DB, &n)
	if err := env.Run(ctx, row); err != nil {
		t.Fatal(err)
	}
	var complete int64
	st.DB.Model(&storage.TrialRow{}).Where("study_id = ? AND state = ?", row.ID, storage.TrialComplete).Count(&complete)
	if complete != int64(size+3) {
		t.Fatalf("%d complete trials, want %d", complete, size+3)
	}
	return n.Load()
}

// fillTrials stores size complete trials of uniform draws with made-up
// scores, in the sampler's tables (as a random sampler writes them) and
// in ours (in batches).
func fillTrials(t *testing.T, env *Env, row *storage.StudyRow, size int) {
	tpl, err := env.Registry.Get(row.Template)
	if err != nil {
		t.Fatal(err)
	}
	opts := samplerOptions()
	opts.StartupTrials = size + 1
	smp, err := search.NewSampler(env.Store.Goptuna(), goptunaName(row), tpl.Space(), search.MethodRandom, 9, opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]storage.TrialRow, size)
	for i := range rows {
		id, values, err := smp.Ask(i)
		if err != nil {
			t.Fatal(err)
		}
		score := rng.Float64()
		if err := smp.Tell(id, score); err != nil {
			t.Fatal(err)
		}
		objectives, _ := json.Marshal(make([]float64, len(tpl.Objectives)))
		rows[i] = storage.TrialRow{StudyID: row.ID, Number: i, State: storage.TrialComplete, GoptunaID: id,
			Params: storage.EncodeParams(tpl.Space().Encode(values)), RescueOf: -1, Score: score, Objectives: string(objectives), Metrics: "{}"}
	}
	if err := env.Store.DB.CreateInBatches(rows, 500).Error; err != nil {
		t.Fatal(err)
	}
}

// countStatements adds one to n for every statement gorm sends to db.
func countStatements(t *testing.T, db *gorm.DB, n *atomic.Int64) {
	count := func(d *gorm.DB) {
		if !d.DryRun { // a subquery is built in a dry run: it is part of its statement
			n.Add(1)
		}
	}
	cb := db.Callback()
	for name, err := range map[string]error{
		"query":  cb.Query().After("gorm:query").Register("test:count", count),
		"create": cb.Create().After("gorm:create").Register("test:count", count),
		"update": cb.Update().After("gorm:update").Register("test:count", count),
		"delete": cb.Delete().After("gorm:delete").Register("test:count", count),
		"row":    cb.Row().After("gorm:row").Register("test:count", count),
		"raw":    cb.Raw().After("gorm:raw").Register("test:count", count),
	} {
		if err != nil {
			t.Fatalf("count %s statements: %v", name, err)
		}
	}
}
