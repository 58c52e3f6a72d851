package studies_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"optimize/internal/pgtest"
	"optimize/internal/testkit"
	"optimize/internal/testkit/studykit"
	"optimize/search"
	"optimize/storage"
	"optimize/studies"
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
	env := studykit.Env(t, dsn, 1)
	st := env.Store
	ctx := context.Background()
	row, err := env.Create(ctx, studies.CreateOptions{Template: "slo-cascade", Name: "q", Trials: size + 3,
		Seeds: []int64{42, 43, 44}, Sampler: "tpe", SamplerSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	fillTrials(t, env, dsn, row, size)
	before := st.Statements()
	if err := env.Run(ctx, row); err != nil {
		t.Fatal(err)
	}
	sent := st.Statements() - before
	if complete, _, err := st.Counts(row.ID); err != nil || complete != int64(size+3) {
		t.Fatalf("%d complete trials (%v), want %d", complete, err, size+3)
	}
	return sent
}

// fillTrials stores size complete trials of uniform draws with made-up
// scores, in the sampler's tables (as a random sampler writes them) and
// in ours (in batches).
func fillTrials(t *testing.T, env *studies.Env, dsn string, row *storage.Study, size int) {
	tpl, err := env.Registry.Get(row.Template)
	if err != nil {
		t.Fatal(err)
	}
	opts := studies.SamplerOptions()
	opts.StartupTrials = size + 1
	smp, err := search.NewSampler(env.Store.Goptuna(), studies.GoptunaName(row), tpl.Space(), search.MethodRandom, 9, opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]map[string]any, size)
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
		rows[i] = map[string]any{"study_id": row.ID, "number": i, "state": storage.TrialComplete, "goptuna_id": id,
			"params": storage.EncodeParams(tpl.Space().Encode(values)), "rescue_of": -1, "score": score, "objectives": string(objectives),
			"metrics": "{}", "violations": "[0]", "violation": 0.0}
	}
	// Written behind the store's back, in batches: 5,000 trials through
	// the study would take minutes.
	if err := testkit.DB(t, dsn).Table("trial_rows").CreateInBatches(rows, 500).Error; err != nil {
		t.Fatal(err)
	}
}
