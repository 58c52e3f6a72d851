// Package studies runs a study's lifecycle: create it (configuration and
// baseline; Validate checks a request, Existing finds it made, Delete), run trials with a worker pool
// through shared storage (Run, each trial evaluated on every seed against
// the baseline from a per-seed workload cache), rescue trials whose worker
// died, resume to the study total with a progress display, migrate a
// database written by an older release (back-filling its violations), and
// run the evidence for a study's winner: validation on held-out seeds and
// regimes (Validate) and ablation by component (Ablate), stored run by
// run. Reading a study back and saying what it found is package report.
package studies

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/c-bata/goptuna"

	"optimize/search"
	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/workload"
	"optimize/storage"
	"optimize/strategies"
	"optimize/strategies/production"
	"optimize/strategies/settings"
	"optimize/strategies/workloads"
	"optimize/studies/report"
)

// Env is what every study operation needs.
type Env struct {
	Store    *storage.Store
	Registry *strategies.Registry
	Base     cluster.Config // defaults and model profile, before any template
	Progress io.Writer      // progress and logs (stderr)
	Workers  int            // trials run at once in this process
	Lease    time.Duration  // a running trial without heartbeat for this long is dead
	Worker   string         // this process's identity in leases
	// History overrides how many of the newest trials TPE models besides
	// the best 25 (search.Options.History; 0: the default), for the
	// search-quality comparisons.
	History int
	// Limits bound what a create may ask for (zero: the defaults).
	Limits Limits
}

// DefaultLease is how long a running trial may go without a heartbeat
// before another worker rescues it (Env.Lease 0, --lease): heartbeats
// come every third of it, and the longest trial measured takes 0.06 s.
const DefaultLease = 30 * time.Second

// Defaults is a create request's defaults, for the CLI's flags and the
// HTTP API alike: 40 trials on seeds 42, 43 and 44, sampler seed 1, the
// template's workload and sampler.
func Defaults() CreateOptions {
	return CreateOptions{Trials: 40, Seeds: []int64{42, 43, 44}, SamplerSeed: 1}
}

// CreateOptions are `optimize study create`'s arguments.
type CreateOptions struct {
	Template    string
	Name        string // "" = template name plus a timestamp
	Trials      int
	Seeds       []int64
	Workload    string // "" = the template's default; a built-in name or a spec file
	Sampler     string // a search.Methods name
	SamplerSeed int64
	// From names an earlier study of the same template whose complete
	// trials seed this study's sampler (a warm start), or "". With
	// FromJournal it names the Optuna journal file instead.
	From string
	// FromJournal is the content of the Optuna JournalStorage log From
	// names, whose study's complete trials seed the sampler (the CLI reads
	// the file; see warm_journal.go), or nil.
	FromJournal []byte
	// BaselineFrom are production configs the baseline runs with instead
	// of the baseline template (production.Kinds), or nil.
	BaselineFrom []storage.ConfigFile
	// BaseFrom are what every run of the study starts from over the
	// standard configuration, kept with it (storage.Study.BaseFrom): a
	// world file (optimize calibrate --fit's), then settings given at
	// create; nil for none.
	BaseFrom []storage.ConfigFile
	// Deployable searches only the settings production carries and
	// simulates every run as its exported files carry it (--deployable;
	// also when the template says deployable: true).
	Deployable bool
	// Robust runs every trial in these regimes × worlds (--regime,
	// --worlds, --aggregate); the zero value takes the template's
	// (Template.Robust), none there is a study of one scenario.
	Robust strategies.Robust
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Validate checks a create request without touching storage and fills in
// the default name and workload.
func Validate(reg *strategies.Registry, o *CreateOptions, limits Limits) error {
	tpl, err := reg.Get(o.Template)
	if err != nil {
		return errtext.UsageError{Err: err}
	}
	if o.Trials < 1 {
		return errtext.Usage("--trials: must be ≥ 1, got %d", o.Trials)
	}
	if err := limits.Check(LimitTrials, "--trials", int64(o.Trials)); err != nil {
		return err
	}
	if len(o.Seeds) == 0 {
		return errtext.Usage("--seeds: give at least one seed")
	}
	if err := limits.Check(LimitSeeds, "--seeds", int64(len(o.Seeds))); err != nil {
		return err
	}
	if o.Sampler == "" {
		o.Sampler = DefaultSampler(tpl)
	}
	m, err := search.ParseMethod(o.Sampler)
	if err != nil {
		return errtext.Usage("--sampler: %v", err)
	}
	o.Sampler = string(m)
	if o.Name == "" {
		o.Name = fmt.Sprintf("%s-%s", tpl.Name, time.Now().UTC().Format("20060102-150405"))
	}
	if !nameRE.MatchString(o.Name) {
		return errtext.Usage("--name: %s must be 1–128 letters, digits, '.', '_' or '-'", errtext.Quote(o.Name))
	}
	if o.Workload == "" {
		o.Workload = tpl.Workload
	}
	// A trace's windows are written into the name the study stores, so
	// that every later command replays the same ones.
	wl, err := workloads.StudyName(o.Workload, len(o.Seeds))
	if err != nil {
		return errtext.UsageError{Err: fmt.Errorf("--workload: %v", err)}
	}
	o.Workload = wl
	if resolved, err := workloads.Resolve(wl); err == nil {
		if err := limits.CheckWorkload(resolved); err != nil {
			return err
		}
	}
	if !o.Robust.Active() {
		aggregate, prune := o.Robust.Aggregate, o.Robust.Prune
		o.Robust = tpl.Robust
		if aggregate != "" && !o.Robust.Active() {
			return errtext.Usage("--aggregate: a study of one scenario has nothing to aggregate: give --regime or --worlds too")
		}
		if aggregate != "" {
			o.Robust.Aggregate = aggregate
		}
		o.Robust.Prune = o.Robust.Prune || prune
	}
	if err := strategies.CheckRobust(&o.Robust, strategies.RobustFlags{Regimes: "--regime", Worlds: "--worlds", Aggregate: "--aggregate", Prune: "--prune"}); err != nil {
		return errtext.UsageError{Err: err}
	}
	o.Deployable = o.Deployable || tpl.Deployable
	if o.Deployable {
		if _, err := tpl.ForProduction(); err != nil {
			return errtext.Usage("--deployable: %v", err)
		}
	}
	if err := checkBaseFrom(tpl, o.BaseFrom, o.Deployable); err != nil {
		return err
	}
	return checkBaselineFrom(o.BaselineFrom)
}

// checkBaseFrom checks the configs a study starts from against its
// template: they read onto the standard configuration, the template's
// defaults run there, and the template neither tunes a setting they give
// nor fixes one to another value (the study would not run as asked).
func checkBaseFrom(tpl *strategies.Template, from []storage.ConfigFile, deployable bool) error {
	if len(from) == 0 {
		return nil
	}
	if deployable {
		tpl, _ = tpl.ForProduction() // Validate checked it
	}
	std, err := settings.StandardConfig()
	if err != nil {
		return err
	}
	base, given, err := report.StudyBase(std, from)
	if err != nil {
		return errtext.Usage("%s: %v", baseFlags(from), err)
	}
	for _, g := range given {
		if tuned, fixed, ok := tpl.Gives(g.Setting.Key); ok && !tuned && fixed != g.Setting.Value(&base) {
			return errtext.Usage("%s: %s is given as %s, and template %s fixes it to %s", baseFlags(from), g.Setting.Key, g.Setting.Value(&base), tpl.Name, fixed)
		}
	}
	// A parameter tuning a given setting is pinned to its value.
	if tpl, _, err = report.StudyTemplate(tpl, std, from, false); err != nil {
		return errtext.Usage("%s: %v", baseFlags(from), err)
	}
	if _, err := tpl.Config(base, tpl.Defaults()); err != nil {
		return errtext.Usage("%s: template %s there: %v", baseFlags(from), tpl.Name, err)
	}
	return nil
}

// baseFlags names the flags the configs came from.
func baseFlags(from []storage.ConfigFile) string {
	var out []string
	for _, f := range from {
		if f.Kind == storage.KindWorld {
			out = append(out, "--world-file")
		} else {
			out = append(out, "--set")
		}
	}
	return strings.Join(out, "/")
}

// BaselineSource says where a study's baseline comes from: "the baseline
// template", or the production configs' kinds and paths with a digest of
// their text (a changed file is another baseline).
func BaselineSource(from []storage.ConfigFile) string {
	if len(from) == 0 {
		return "the baseline template"
	}
	parts := make([]string, len(from))
	for i, f := range from {
		parts[i] = fmt.Sprintf("%s %s (sha256 %.12x)", f.Kind, f.Path, sha256.Sum256([]byte(f.Data)))
	}
	return strings.Join(parts, ", ")
}

// checkBaselineFrom reads the production configs onto the standard
// configuration, so that a config the simulator does not model is a usage
// error before anything runs; the flag named is the one that gave it.
func checkBaselineFrom(from []storage.ConfigFile) error {
	c, err := settings.Standard()
	if err != nil {
		return err
	}
	for _, f := range from {
		if _, err := production.Apply(f.Kind, f.Path, []byte(f.Data), &c); err != nil {
			return errtext.Usage("--baseline-%s: %v", strings.TrimSuffix(f.Kind, "-config"), err)
		}
	}
	return nil
}

// DefaultSampler is the template's own sampler when it names one, else
// the Gaussian process on the primary objective (gp): on joint-slo, 100
// trials, sampler seeds 1-10, its median best after 25, 50 and 100 trials
// is ahead of Optuna 3.1's TPE and of ours, and it reaches Optuna's
// 100-trial median in 42 trials against Optuna's 95.5 (BENCHMARKS.md,
// "Samplers against Optuna"). tpe, parego and random stay available by
// name; capacity names grid.
func DefaultSampler(tpl *strategies.Template) string {
	if tpl.Sampler != "" {
		return tpl.Sampler
	}
	return string(search.DefaultMethod)
}

// Create validates everything, then writes the study and its baseline.
// Nothing is written when validation fails.
func (e *Env) Create(ctx context.Context, o CreateOptions) (*storage.Study, error) {
	if err := Validate(e.Registry, &o, e.Limits); err != nil {
		return nil, err
	}
	tpl, _ := e.Registry.Get(o.Template)
	if err := e.Migrate(); err != nil {
		return nil, err
	}
	if _, err := e.Store.StudyByName(o.Name); err == nil {
		return nil, nameTaken(o.Name)
	} else if !errors.Is(err, storage.ErrStudyNotFound) {
		return nil, err
	}
	row := &storage.Study{
		Name: o.Name, Template: tpl.Name, Workload: o.Workload, Seeds: o.Seeds,
		Sampler: o.Sampler, SamplerSeed: o.SamplerSeed, TrialsTotal: o.Trials, WarmFrom: o.warmFrom(),
		BaselineFrom: o.BaselineFrom, BaseFrom: o.BaseFrom, Deployable: o.Deployable,
	}
	row.Robust = robustRecord(o.Robust)
	var from *report.Report
	if o.From != "" && o.FromJournal == nil {
		var err error
		if from, err = report.Load(e.Store, e.Registry, o.From); err != nil {
			return nil, errtext.UsageError{Err: fmt.Errorf("--from: %v", err)}
		}
		if from.Study.Template != tpl.Name {
			return nil, errtext.Usage("--from: study %s searched template %s, not %s: a warm start needs the same parameters", o.From, from.Study.Template, tpl.Name)
		}
		if from.Study.Deployable != o.Deployable {
			return nil, errtext.Usage("--from: study %s is %s and this one %s (--deployable): a warm start needs the same parameters", o.From, deployableText(from.Study.Deployable), deployableText(o.Deployable))
		}
	}
	ev, err := e.evaluator(row)
	if err != nil {
		return nil, err
	}
	if err := checkTargets(ev); err != nil {
		return nil, err
	}
	journal, err := o.journalTrials(ev.tpl)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.Progress, "study %s: template %s, workload %s, seeds %v, %d trials, %s sampler\n",
		o.Name, tpl.Name, o.Workload, o.Seeds, o.Trials, o.Sampler)
	if cost := robustCost(row, o.Trials); cost != "" {
		fmt.Fprintln(e.Progress, cost)
	}
	if tw := report.TraceWindowsOf(o.Workload, o.Seeds); tw != nil {
		tw.WriteText(e.Progress)
		fmt.Fprintln(e.Progress)
	}
	if err := e.runBaseline(ev, row); err != nil {
		return nil, err
	}
	if err := e.Store.CreateStudy(row); errors.Is(err, storage.ErrStudyExists) {
		return nil, nameTaken(o.Name) // another process created it since the check above
	} else if err != nil {
		return nil, err
	}
	smp, err := e.sampler(row, ev.tpl, nil) // creates the goptuna study once, here
	if err == nil && from != nil {
		err = warm(smp, from)
	}
	if err == nil && journal != nil {
		err = warmJournal(smp, row.WarmFrom, journal)
	}
	if err != nil {
		// Nothing half-written: no study without its sampler (and a
		// failed clean-up is said too).
		return nil, errors.Join(err, e.Delete(row))
	}
	return row, nil
}

// deployableText says which space a study searches, for errors.
func deployableText(deployable bool) string {
	if deployable {
		return "deployable (only what production carries)"
	}
	return "not deployable (the template's whole space)"
}

// nameTaken is the usage error of a create whose name is taken, whether
// the check before the baseline saw it or the insert after it did.
func nameTaken(name string) error {
	return errtext.Usage("--name: study %q already exists (resume it, or delete it first)", name)
}

// Existing returns study o.Name when it exists and a create request o
// (validated) would make the same study: template, workload, seeds,
// sampler, sampler seed, total, warm start and baseline configs. A study of that name made
// otherwise is a usage error naming the first difference; none is (nil,
// nil). A create retried after it succeeded (a Kubernetes Job's pod
// restarted) can so tell that its work is done.
func (e *Env) Existing(o CreateOptions) (*storage.Study, error) {
	row, err := e.Store.StudyByName(o.Name)
	if errors.Is(err, storage.ErrStudyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	tpl, err := e.Registry.Get(o.Template)
	if err != nil {
		return nil, errtext.UsageError{Err: err}
	}
	seeds := func(s []int64) string { js, _ := json.Marshal(s); return string(js) } // as the user wrote them
	for _, d := range []struct {
		flag      string
		have, ask any
	}{
		{"TEMPLATE", row.Template, tpl.Name},
		{"--trials", row.TrialsTotal, o.Trials},
		{"--workload", row.Workload, o.Workload},
		{"--seeds", seeds(row.Seeds), seeds(o.Seeds)},
		{"--sampler", row.Sampler, o.Sampler},
		{"--sampler-seed", row.SamplerSeed, o.SamplerSeed},
		{"--from", row.WarmFrom, o.warmFrom()},
		{"--baseline-epp/--baseline-vllm-args", BaselineSource(row.BaselineFrom), BaselineSource(o.BaselineFrom)},
		{"--world-file/--set", baseFromText(row.BaseFrom), baseFromText(o.BaseFrom)},
		{"--regime/--worlds/--aggregate", robustText(row.Robust), robustText(robustRecord(o.Robust))},
		{"--deployable", row.Deployable, o.Deployable},
	} {
		if d.have != d.ask {
			return nil, errtext.Usage("--name: study %q exists with %s %v, not %v (resume it, or delete it first)", o.Name, d.flag, d.have, d.ask)
		}
	}
	return row, nil
}

// runBaseline evaluates the baseline in the study's environment and
// records that environment's world: the world of the template's defaults
// under the workload's regime, which the baseline shares (baselineConfig).
func (e *Env) runBaseline(ev *evaluator, row *storage.Study) error {
	studyCfg, err := ev.config(ev.tpl.Defaults())
	if err != nil {
		return err
	}
	world := studyCfg.Where()
	row.World = &world
	cfg, err := baselineConfig(e.Registry, studyCfg, ev.base, row.BaselineFrom)
	if err != nil {
		return err
	}
	mean, perSeed, err := ev.run(cfg)
	if err != nil {
		return fmt.Errorf("baseline: %v", err)
	}
	row.Baseline, row.BaselineSeeds = mean, perSeed
	if row.Robust != nil {
		return e.scenarioBaselines(ev, row)
	}
	return nil
}

// evaluator rebuilds a study's evaluator from its row.
func (e *Env) evaluator(row *storage.Study) (*evaluator, error) {
	tpl, err := e.Registry.Get(row.Template)
	if err != nil {
		return nil, err
	}
	if tpl, _, err = report.StudyTemplate(tpl, e.Base, row.BaseFrom, row.Deployable); err != nil {
		return nil, err
	}
	wl, err := workloads.Resolve(row.Workload)
	if err != nil {
		return nil, err
	}
	if wl, err = e.studyLoad(tpl, wl, row); err != nil {
		return nil, err
	}
	start, err := e.baseOf(row)
	if err != nil {
		return nil, err
	}
	ev := &evaluator{tpl: tpl, base: start, wl: wl.OnSeeds(row.Seeds), seeds: row.Seeds, deployable: row.Deployable}
	if len(row.BaselineSeeds) > 0 { // measured (not while Create runs it)
		ev.baseline = &row.Baseline
	}
	robustEvaluators(row, ev, wl)
	return ev, nil
}

// warm seeds smp with from's complete trials: their parameters, scores
// and objectives as ratios to from's own baseline.
func warm(smp *search.Sampler, from *report.Report) error {
	for i := range from.Complete {
		c := &from.Complete[i]
		if err := smp.Warm(from.Study.Name, c.Params, from.Evaluation(c)); err != nil {
			return err
		}
	}
	return nil
}

// sampler opens the study's sampler; ev, when the sampler will propose
// (nil while Create only makes the study), supplies what a point's
// configuration decides before it runs (search.Options.KnownRatio).
func (e *Env) sampler(row *storage.Study, tpl *strategies.Template, ev *evaluator) (*search.Sampler, error) {
	opts := samplerOptions()
	opts.Warm = row.WarmFrom != ""
	opts.Start = tpl.Defaults()
	opts.History = e.History
	if ev != nil {
		opts.KnownRatio = ev.knownRatio()
	}
	s, err := search.NewSampler(e.Store.Goptuna(), goptunaName(row), tpl.Space(), search.Method(row.Sampler), row.SamplerSeed, opts)
	if err != nil {
		return nil, fmt.Errorf("study %s: sampler: %v", row.Name, err)
	}
	return s, nil
}

// goptunaName names the goptuna study after ours.
func goptunaName(row *storage.Study) string { return "optimize:" + row.Name }

// Delete removes a study: our rows and goptuna's study.
func (e *Env) Delete(row *storage.Study) error {
	if err := e.Store.DeleteStudy(row); err != nil {
		return err
	}
	// goptuna's tables may not know the study (created before a failure).
	_ = goptuna.DeleteStudy(goptunaName(row), e.Store.Goptuna())
	return nil
}

// samplerOptions: TPE models after 5 random trials, not goptuna's 10. With
// a 40-trial budget that leaves 35 guided trials; measured over 10 study
// seeds of slo-cascade, TPE beat random search 8 times with 5 startup
// trials and 6 times with 10 (BENCHMARKS.md).
func samplerOptions() search.Options { return search.Options{StartupTrials: 5} }

// baseOf is the configuration the study's runs start from: the standard
// one, with the study's world file over it.
func (e *Env) baseOf(row *storage.Study) (cluster.Config, error) {
	base, _, err := report.StudyBase(e.Base, row.BaseFrom)
	return base, err
}

// baseFromText names the configs and their content, for comparing a
// request with a study (--if-absent): "" for none.
func baseFromText(from []storage.ConfigFile) string {
	var out []string
	for _, f := range from {
		out = append(out, f.Kind+" "+f.Path+" ("+fmt.Sprintf("%x", sha256.Sum256([]byte(f.Data)))[:12]+")")
	}
	return strings.Join(out, ", ")
}

// checkTargets refuses, before the baseline runs, a study whose template
// reads a class its workload has no requests of, or a latency target its
// runs will not have. The class comes first: a target for a class with no
// requests would not help (slo-cascade bounds every class's attainment, so
// on a trace without classes it needs both, and the class mix is the fix).
func checkTargets(ev *evaluator) error {
	cfg, err := ev.config(ev.tpl.Defaults())
	if err != nil {
		return nil // the baseline run says why
	}
	if err := checkClasses(ev.tpl, ev.wl); err != nil {
		return err
	}
	if ev.wl.Spec != nil {
		ev.wl.Spec.FillTargets(&cfg.SLOTTFT, &cfg.SLOITL, &cfg.SLOE2E)
	}
	if err := ev.tpl.CheckTargets(&cfg); err != nil {
		return errtext.UsageError{Err: err}
	}
	return nil
}

// checkClasses refuses a study whose template reads a class its workload
// has no requests of, where the workload says which it has: a spec's
// clients, or a trace's SLO mix (a public trace without one carries no
// classes).
func checkClasses(tpl *strategies.Template, wl *workloads.Workload) error {
	var have []string
	var where string
	switch {
	case wl.Spec != nil:
		for _, c := range wl.Spec.Clients {
			have = append(have, c.SLOClass)
		}
		where = "its clients' classes: " + strings.Join(have, ", ")
	case wl.Trace != nil && len(wl.Trace.Replay.SLOMix) > 0:
		for _, s := range wl.Trace.Replay.SLOMix {
			if s.Share > 0 {
				have = append(have, s.Class.Label())
			}
		}
		where = "its slo-mix: " + wl.Trace.Replay.SLOMix.String()
	case wl.Trace != nil && wl.Trace.Format != "" && wl.Trace.Format != workload.FormatTraceV2:
		sep := "?"
		if strings.Contains(wl.Trace.Name, "?") {
			sep = "&"
		}
		where = "its rows carry none: give the trace an slo-mix, e.g. " + wl.Trace.Name + sep + "slo-mix=critical=0.2,standard=0.5,sheddable=0.3"
	default:
		return nil // a TraceV2 trace's rows may give theirs
	}
	for _, class := range tpl.ClassesRead() {
		if !slices.Contains(have, class) {
			return errtext.Usage("template %s reads per_slo.%s metrics, and workload %s has no %s requests (%s)", tpl.Name, class, wl.Name, class, where)
		}
	}
	return nil
}
