package storage

import (
	"encoding/json"
	"fmt"
	"time"

	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
)

// Study is a study as the rest of the program sees it: what it optimises,
// how, and its baseline's metrics, decoded from its row.
type Study struct {
	ID          uint
	Name        string
	Template    string
	Workload    string
	Seeds       []int64
	Sampler     string
	SamplerSeed int64
	TrialsTotal int
	// WarmFrom names the study whose complete trials seeded this one's
	// sampler (its provenance), or "".
	WarmFrom string
	// Baseline is the baseline's mean metrics over the seeds;
	// BaselineSeeds the same on each seed, in Seeds order.
	Baseline      metrics.Summary
	BaselineSeeds []metrics.Summary
	// World is the world the study's baseline (and every trial, unless its
	// template tunes the world) runs in; nil for a study stored before
	// studies recorded it.
	World *cluster.World
	// BaselineFrom is the production configs the study's baseline runs
	// with instead of the baseline template, in the order applied; nil
	// for a template baseline.
	BaselineFrom []ConfigFile
	// BaseFrom are the configs every run of the study — baseline,
	// trials, validation, export — applies over the standard
	// configuration before its template, in order: a world file (kind
	// KindWorld, optimize calibrate --fit's) and the settings given at
	// create (kind KindSettings: `key: value` lines); nil for none.
	BaseFrom []ConfigFile
	// Robust is a robust study's scenarios and their baselines; nil for a
	// study of one scenario.
	Robust *Robust
	// Deployable: the study searches only the settings production
	// carries, and simulates every run as its exported files carry it
	// (study create --deployable, or its template's deployable: true).
	Deployable bool
	// Failure is why the study's last run stopped before its total: the
	// error of the trial that stopped it, one line; "" when it never
	// failed or a run has started since (RecordFailure).
	Failure   string
	CreatedAt time.Time
}

// Robust is what a robust study runs every trial in — regimes × worlds,
// as strategies.Robust names them — with the baseline of every scenario
// but the first (whose baseline is the study's Baseline).
type Robust struct {
	Regimes   []string `json:"regimes"`
	Worlds    []string `json:"worlds,omitempty"`
	Aggregate string   `json:"aggregate"`
	// Prune: a trial stops once its scenarios so far prove it cannot
	// beat the best (strategies.Robust.Prune); it is then TrialPruned.
	Prune     bool               `json:"prune,omitempty"`
	Baselines []ScenarioBaseline `json:"baselines"`
}

// ScenarioBaseline is the baseline in one scenario of a robust study: its
// mean over the seeds and each seed's run, in the study's seed order.
type ScenarioBaseline struct {
	Scenario string            `json:"scenario"`
	Mean     metrics.Summary   `json:"mean"`
	PerSeed  []metrics.Summary `json:"per_seed"`
}

// Baseline finds scenario's baseline; nil when r has none of that name.
func (r *Robust) Baseline(scenario string) *ScenarioBaseline {
	for i := range r.Baselines {
		if r.Baselines[i].Scenario == scenario {
			return &r.Baselines[i]
		}
	}
	return nil
}

// ConfigFile is a config a study keeps: its kind (as production.Kinds
// names it, or KindWorld, KindSettings), the path it was read from, and
// its text, so that every later run reads the same config.
type ConfigFile struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
	Data string `json:"data"`
}

// Trial is one trial, its columns decoded. A claimed trial (Claim.Trial)
// is also the handle its worker passes back to record its proposal and
// result.
type Trial struct {
	ID        uint
	Number    int
	State     string
	Worker    string
	GoptunaID int       // the sampler's id of the trial, 0 before its proposal
	RescueOf  int       // the failed trial whose parameters it re-runs, -1 for none
	Params    []float64 // aligned with the template's parameters; NaN where inactive
	Score     float64
	// Objectives are the template's objectives, means over the seeds; NaN
	// where missing.
	Objectives []float64
	// Judged says whether the row holds its constraint violations: rows
	// written before they were stored do not, until back-filled.
	Judged      bool
	Violations  []float64    // each constraint's shortfall (NaN: not measured)
	Violation   float64      // their total (search.Evaluation.Violation)
	SeedRanges  [][2]float64 // each objective's range over the seeds; nil when not stored
	StartedAt   time.Time
	HeartbeatAt time.Time  // its worker's last sign of life
	FinishedAt  *time.Time // nil while running
}

// SeedRun is one trial's metrics on one seed, in one scenario of a
// robust study ("": the reference scenario, every run of other studies).
type SeedRun struct {
	Seed     int64
	Metrics  metrics.Summary
	Scenario string
}

// row encodes a study for its table.
func (st *Study) row() (*studyRow, error) {
	seeds, err := json.Marshal(st.Seeds)
	if err != nil {
		return nil, err
	}
	base, err := encodeMetrics(st.Baseline)
	if err != nil {
		return nil, fmt.Errorf("baseline: %v", err)
	}
	perSeed, err := encodeMetrics(st.BaselineSeeds)
	if err != nil {
		return nil, fmt.Errorf("baseline per seed: %v", err)
	}
	var world []byte
	if st.World != nil {
		if world, err = json.Marshal(st.World); err != nil {
			return nil, fmt.Errorf("world: %v", err)
		}
	}
	var robust string
	if st.Robust != nil {
		if robust, err = encodeMetrics(st.Robust); err != nil {
			return nil, fmt.Errorf("robust scenarios: %v", err)
		}
	}
	var from []byte
	if st.BaselineFrom != nil {
		if from, err = json.Marshal(st.BaselineFrom); err != nil {
			return nil, fmt.Errorf("baseline configs: %v", err)
		}
	}
	var baseFrom []byte
	if st.BaseFrom != nil {
		if baseFrom, err = json.Marshal(st.BaseFrom); err != nil {
			return nil, fmt.Errorf("base configs: %v", err)
		}
	}
	return &studyRow{ID: st.ID, Name: st.Name, Template: st.Template, Workload: st.Workload, Seeds: string(seeds),
		Sampler: st.Sampler, SamplerSeed: st.SamplerSeed, TrialsTotal: st.TrialsTotal, WarmFrom: st.WarmFrom,
		Baseline: base, BaselineSeeds: perSeed, World: string(world), BaselineFrom: string(from), BaseFrom: string(baseFrom), Robust: robust, Deployable: st.Deployable, Failure: st.Failure, CreatedAt: st.CreatedAt}, nil
}

// study decodes a study's row.
func (r *studyRow) study() (Study, error) {
	st := Study{ID: r.ID, Name: r.Name, Template: r.Template, Workload: r.Workload, Sampler: r.Sampler,
		SamplerSeed: r.SamplerSeed, TrialsTotal: r.TrialsTotal, WarmFrom: r.WarmFrom, Deployable: r.Deployable, Failure: r.Failure, CreatedAt: r.CreatedAt}
	if err := json.Unmarshal([]byte(r.Seeds), &st.Seeds); err != nil {
		return st, fmt.Errorf("study %s: seeds: %v", r.Name, err)
	}
	if err := json.Unmarshal([]byte(r.Baseline), &st.Baseline); err != nil {
		return st, fmt.Errorf("study %s: baseline: %v", r.Name, err)
	}
	if err := json.Unmarshal([]byte(r.BaselineSeeds), &st.BaselineSeeds); err != nil || len(st.BaselineSeeds) != len(st.Seeds) {
		return st, fmt.Errorf("study %s: baseline per seed: %d runs for %d seeds (%v)", r.Name, len(st.BaselineSeeds), len(st.Seeds), err)
	}
	if r.World != "" {
		st.World = new(cluster.World)
		if err := json.Unmarshal([]byte(r.World), st.World); err != nil {
			return st, fmt.Errorf("study %s: world: %v", r.Name, err)
		}
	}
	if r.BaselineFrom != "" {
		if err := json.Unmarshal([]byte(r.BaselineFrom), &st.BaselineFrom); err != nil {
			return st, fmt.Errorf("study %s: baseline configs: %v", r.Name, err)
		}
	}
	if r.BaseFrom != "" {
		if err := json.Unmarshal([]byte(r.BaseFrom), &st.BaseFrom); err != nil {
			return st, fmt.Errorf("study %s: base configs: %v", r.Name, err)
		}
	}
	if r.Robust != "" {
		st.Robust = new(Robust)
		if err := json.Unmarshal([]byte(r.Robust), st.Robust); err != nil {
			return st, fmt.Errorf("study %s: robust scenarios: %v", r.Name, err)
		}
	}
	return st, nil
}

// trial decodes a trial's row (every column a report reads; not its
// metrics, which TrialMetrics reads on demand).
func (r *trialRow) trial() (Trial, error) {
	t := Trial{ID: r.ID, Number: r.Number, State: r.State, Worker: r.Worker, GoptunaID: r.GoptunaID, RescueOf: r.RescueOf,
		Score: r.Score, StartedAt: r.StartedAt, HeartbeatAt: r.HeartbeatAt, FinishedAt: r.FinishedAt}
	if !Finished(r.State) && r.Params == "" {
		return t, nil // claimed, not yet proposed
	}
	var err error
	if t.Params, err = DecodeFloats(r.Params); err != nil {
		return t, fmt.Errorf("trial %d: params: %v", r.Number, err)
	}
	if !Finished(r.State) {
		return t, nil
	}
	if t.Objectives, err = DecodeFloats(r.Objectives); err != nil {
		return t, fmt.Errorf("trial %d: objectives: %v", r.Number, err)
	}
	t.SeedRanges = decodeRanges(r.SeedRanges, len(t.Objectives))
	if r.Violation != nil {
		if t.Violations, err = DecodeFloats(r.Violations); err != nil {
			return t, fmt.Errorf("trial %d: violations: %v", r.Number, err)
		}
		t.Violation, t.Judged = *r.Violation, true
	}
	return t, nil
}

// decodeMetrics reads a metrics column.
func decodeMetrics(js string) (metrics.Summary, error) {
	var m metrics.Summary
	err := json.Unmarshal([]byte(js), &m)
	return m, err
}

// Kinds of the configs a study starts from (Study.BaseFrom).
const (
	KindWorld    = "world"    // a world file
	KindSettings = "settings" // settings given at create, a settings file's text
)

// Config finds the first of the configs of kind; nil when none is.
func Config(from []ConfigFile, kind string) *ConfigFile {
	for i := range from {
		if from[i].Kind == kind {
			return &from[i]
		}
	}
	return nil
}
