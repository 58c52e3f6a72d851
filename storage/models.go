package storage

import "time"

// studyRow is one study: what it optimises, how, and its baseline.
type studyRow struct {
	ID          uint   `gorm:"primaryKey"`
	Name        string `gorm:"size:255;uniqueIndex;not null"`
	Template    string `gorm:"size:255;not null"`
	Workload    string `gorm:"size:1024;not null"`
	Seeds       string `gorm:"not null"` // JSON []int64
	Sampler     string `gorm:"size:32;not null"`
	SamplerSeed int64
	TrialsTotal int
	// WarmFrom names the study whose complete trials seeded this one's
	// sampler (its provenance), or "".
	WarmFrom string `gorm:"size:255"`
	// Baseline is the baseline's mean metrics over the seeds (JSON
	// metrics.Summary); BaselineSeeds the per-seed ones (JSON array).
	Baseline      string `gorm:"type:text"`
	BaselineSeeds string `gorm:"type:text"`
	// World is the world the study runs in (JSON cluster.World): empty
	// in rows written before studies recorded it, and in databases not
	// migrated since (gorm then reads no such column).
	World string `gorm:"type:text"`
	// BaselineFrom is the production configs the baseline runs with
	// instead of the baseline template (JSON []ConfigFile): empty for a
	// template baseline, in rows written before it existed, and in
	// databases not migrated since.
	BaselineFrom string `gorm:"type:text"`
	// BaseFrom is what every run of the study starts from over the
	// standard configuration (JSON []ConfigFile: study create
	// --world-file, --set): empty for none, in rows written before it
	// existed, and in databases not migrated since.
	BaseFrom string `gorm:"type:text"`
	// Robust is a robust study's scenarios and their baselines (JSON
	// Robust): empty for a study of one scenario, in rows written before
	// it existed, and in databases not migrated since.
	Robust string `gorm:"type:text"`
	// Deployable: the study searches only what production carries (study
	// create --deployable); false in rows written before it existed, and
	// in databases not migrated since.
	Deployable bool
	// Failure is why the study's last run stopped before its total (a
	// trial's error, one line); empty when it never failed, once a later
	// run starts, and in databases not migrated since it existed.
	Failure   string `gorm:"type:text"`
	CreatedAt time.Time
}

// Trial states.
const (
	TrialRunning  = "running"
	TrialComplete = "complete"
	TrialFailed   = "failed" // a dead worker's trial, rescued and re-run under a new number
	// TrialPruned is a robust study's trial stopped before its last
	// scenario because those it ran prove it cannot beat the best (see
	// strategies.Robust.Prune): finished and counted towards the total,
	// but never the best nor on the Pareto front, its objectives being
	// bounds, not measurements.
	TrialPruned = "pruned"
)

// resultStates are the states of a trial that counts towards its
// study's total.
var resultStates = []string{TrialComplete, TrialPruned}

// Finished reports whether a trial in state has its result: complete or
// pruned.
func Finished(state string) bool { return state == TrialComplete || state == TrialPruned }

// trialRow is one parameter vector evaluated on every seed.
type trialRow struct {
	ID uint `gorm:"primaryKey"`
	// The indexes serve the queries every trial makes, so that their cost
	// does not grow with the study: (study, number) the next number,
	// (study, state, score) the counts and the best trial, (study,
	// rescue_of) whether a failed trial was re-run; idx_trial_report holds
	// every column a report reads for each trial (Store.Trials), so that
	// loading a study never reads the rows' large metrics.
	StudyID   uint   `gorm:"not null;uniqueIndex:idx_study_number;index:idx_study_state_score,priority:1;index:idx_study_rescue,priority:1;index:idx_trial_report,priority:1"`
	Number    int    `gorm:"not null;uniqueIndex:idx_study_number;index:idx_study_state_score,priority:4;index:idx_trial_report,priority:2"`
	State     string `gorm:"size:16;not null;index;index:idx_study_state_score,priority:2;index:idx_trial_report,priority:3"`
	GoptunaID int
	Params    string `gorm:"type:text;index:idx_trial_report,priority:5"` // JSON []float64, aligned with the template's parameters
	// RescueOf is the number of the failed trial whose parameters this one
	// re-runs (-1 for none).
	RescueOf   int     `gorm:"index:idx_study_rescue,priority:2"`
	Score      float64 `gorm:"index:idx_study_state_score,priority:3;index:idx_trial_report,priority:4"`
	Objectives string  `gorm:"type:text;index:idx_trial_report,priority:6"` // JSON []float64, the template's objectives (means over seeds)
	Metrics    string  `gorm:"type:text"`                                   // JSON metrics.Summary (means over seeds)
	// SeedRanges is each objective's lowest and highest value over the
	// seeds (JSON [][2]float64), so that listing trials needs no per-seed
	// rows; empty in rows written before it existed.
	SeedRanges string `gorm:"type:text;index:idx_trial_report,priority:7"`
	// Violations is each constraint's relative shortfall (JSON []float64,
	// 0 when met, null when it could not be measured) and Violation their
	// total (search.Evaluation.Violation): whether the trial is feasible
	// is decided from it alone. Rows written before they existed hold
	// NULL until Migrate's caller back-fills them.
	Violations  string   `gorm:"type:text;index:idx_trial_report,priority:9"`
	Violation   *float64 `gorm:"index:idx_trial_report,priority:8"`
	Worker      string   `gorm:"size:255"`
	HeartbeatAt time.Time
	StartedAt   time.Time
	FinishedAt  *time.Time
}

// trialSeedRow is one trial's metrics on one seed.
type trialSeedRow struct {
	ID      uint   `gorm:"primaryKey"`
	TrialID uint   `gorm:"not null;index"`
	Seed    int64  `gorm:"not null"`
	Metrics string `gorm:"type:text;not null"` // JSON metrics.Summary
	// Scenario is the robust study's scenario the run is of (Robust), ""
	// for the study's reference scenario: every row of a study of one
	// scenario, and every row written before robust studies existed.
	Scenario string `gorm:"size:255;not null;default:''"`
}
