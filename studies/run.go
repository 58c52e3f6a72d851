package studies

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/c-bata/goptuna"

	"optimize/search"
	"optimize/simcore/errtext"
	"optimize/storage"
	"optimize/studies/report"
)

// Run works on the study until it has its total of complete trials or ctx
// is cancelled (trials in flight then finish and are recorded). Trials are
// claimed one at a time through the database, so any number of processes
// may run the same study. A run that stops on an error records it with
// the study (its pages say why it stopped); the next run clears it.
func (e *Env) Run(ctx context.Context, row *storage.Study) error {
	if row.Failure != "" {
		if err := e.Store.RecordFailure(row.ID, ""); err != nil {
			return err
		}
		row.Failure = ""
	}
	err := e.run(ctx, row)
	if err != nil && ctx.Err() == nil {
		why := errtext.OneLine(err.Error())
		if rerr := e.Store.RecordFailure(row.ID, why); rerr != nil {
			return errors.Join(err, rerr)
		}
		row.Failure = why
	}
	return err
}

// run is Run's work on the study.
func (e *Env) run(ctx context.Context, row *storage.Study) error {
	ev, err := e.evaluator(row)
	if err != nil {
		return err
	}
	if rb, ok := robustStudy(row); ok && rb.Prune {
		ev.pruner = newPruner(e.Store, row, 1+len(ev.others))
	}
	smp, err := e.sampler(row, ev.tpl, ev)
	if err != nil {
		return err
	}
	p := newProgress(e.Progress, row, e.Store, ev.describe)
	defer p.finish()
	workers := max(1, e.Workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- e.workLoop(ctx, row, ev, smp, p)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// workLoop claims and runs trials until the study is done or ctx ends.
func (e *Env) workLoop(ctx context.Context, row *storage.Study, ev *evaluator, smp *search.Sampler, p *progress) error {
	for ctx.Err() == nil {
		// The claim fails dead workers' trials in both ledgers itself.
		claim, err := e.Store.ClaimTrial(row, e.Worker, e.lease(), isAlive)
		if err != nil {
			return err
		}
		if claim.Done {
			return nil
		}
		if claim.Trial == nil {
			// Every remaining trial is running somewhere: wait for them,
			// and take over any whose worker dies. A short poll (a claim
			// that finds nothing only reads) lets this worker exit soon
			// after the study's last trial, not up to a poll later.
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if err := e.runTrial(claim, ev, smp); err != nil {
			return err
		}
		p.trialDone()
	}
	return nil
}

// runTrial proposes (or re-runs) a parameter vector, evaluates it while
// renewing the lease, and records the result. Each step writes our trial
// row and the sampler's in one transaction (storage's ...In with search's
// ...With): the two ledgers never disagree. A step interrupted by a lost
// connection is run again by the store for its retry window; the result
// waits in memory meanwhile.
func (e *Env) runTrial(claim storage.Claim, ev *evaluator, smp *search.Sampler) error {
	t := claim.Trial
	propose := func(st goptuna.Storage, gid int, stored []float64) error {
		return e.Store.ProposalIn(st, t, gid, stored)
	}
	var values []search.Value
	var gid int
	var err error
	if claim.Rescue != nil {
		if values, err = ev.tpl.Space().Decode(claim.Rescue); err == nil {
			gid, err = smp.AskFixedWith(t.Number, values, propose)
		}
	} else {
		gid, values, err = smp.AskWith(t.Number, propose)
	}
	if errors.Is(err, storage.ErrLeaseLost) {
		// Failed by another worker's claim meanwhile (see ProposalIn):
		// nothing of this step was written. Or, after a lost connection,
		// an earlier run of this step committed unseen: the proposal is
		// in both ledgers and its trial stays running until its lease
		// expires, when it is rescued and re-run (a lease's delay, no
		// result twice).
		return nil
	}
	if err != nil {
		return errors.Join(fmt.Errorf("trial %d: propose: %v", t.Number, err), e.Store.Release(t))
	}
	stop := e.heartbeat(t)
	res, err := e.evaluate(ev, values)
	stop()
	if err != nil {
		release := func(st goptuna.Storage, _ int, _ []float64) error { return e.Store.ReleaseIn(st, t) }
		return errors.Join(fmt.Errorf("trial %d: %v", t.Number, err), smp.FailWith(gid, release))
	}
	// A pruned trial's judgement is a bound (see pruner): the sampler
	// models it by that bound, at most its true score.
	judged := res.judged
	out := storage.Outcome{Score: judged.Score(search.DefaultViolationWeight), Objectives: judged.Objectives,
		Violations: judged.Violations, Violation: judged.Violation(), Ranges: res.ranges, Mean: res.mean, Seeds: ev.seeds,
		PerSeed: res.perSeed, Scenarios: res.scenarios, Pruned: res.pruned}
	complete := func(st goptuna.Storage, _ int, _ []float64) error { return e.Store.CompleteIn(st, t, out) }
	err = smp.TellObjectivesWith(gid, judged, complete)
	if errors.Is(err, storage.ErrLeaseLost) {
		// Rescued by another worker meanwhile: the rescuer's copy counts.
		// Its claim failed the sampler's trial too; failing it here
		// covers a row failed otherwise. (Or an earlier run of this step
		// committed unseen: recorded once all the same, and finished.)
		if err := smp.Fail(gid); err != nil && !errors.Is(err, goptuna.ErrTrialCannotBeUpdated) {
			return err
		}
		return nil
	}
	if err != nil {
		// The trial stays running in both ledgers: rescued once its
		// lease expires.
		return fmt.Errorf("storage %s: complete trial %d: %s", e.Store.Label, t.Number, err)
	}
	return nil
}

// evaluate runs values on every seed and judges the mean against the
// baseline; in a robust study, in every scenario, judged by the aggregate.
func (e *Env) evaluate(ev *evaluator, values []search.Value) (trialRuns, error) {
	if ev.others != nil {
		return ev.evaluateScenarios(values)
	}
	var t trialRuns
	cfg, err := ev.runConfig(values)
	if err != nil {
		return t, err
	}
	if t.mean, t.perSeed, err = ev.run(cfg); err != nil {
		return t, err
	}
	if t.judged, err = ev.judge(&t.mean); err != nil {
		return t, err
	}
	t.ranges = make([][2]float64, len(ev.tpl.Objectives))
	for k, o := range ev.tpl.Objectives {
		sp := report.Spread(t.perSeed, o.Metric)
		t.ranges[k] = [2]float64{sp.Min, sp.Max}
	}
	return t, nil
}

// heartbeat renews t's lease until the returned stop is called.
func (e *Env) heartbeat(t *storage.Trial) (stop func()) {
	done := make(chan struct{})
	every := e.lease() / 3
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				// A heartbeat that fails (the database away longer than
				// the store's retry window) may cost the lease: the
				// trial's result then meets ErrLeaseLost and the
				// rescuer's copy counts, never both.
				_ = e.Store.Heartbeat(t)
			}
		}
	}()
	return func() { close(done) }
}

func (e *Env) lease() time.Duration {
	if e.Lease > 0 {
		return e.Lease
	}
	return DefaultLease
}

// WorkerHostVar names the environment variable that overrides the host
// part of WorkerID: tests use it to make a worker on this machine look
// remote, so that its death is noticed by lease expiry alone; the
// Kubernetes worker Job sets it to the pod's name, because an Indexed
// Job's pods share hostnames across retries.
const WorkerHostVar = "OPTIMIZE_WORKER_HOST"

// WorkerID names this process in leases: host, pid and start time, so
// that a process on the same host can tell a dead owner at once.
func WorkerID() string {
	return fmt.Sprintf("%s:%d:%d", workerHost(), os.Getpid(), time.Now().UnixNano())
}

func workerHost() string {
	if h := os.Getenv(WorkerHostVar); h != "" {
		return strings.ReplaceAll(h, ":", "_")
	}
	host, _ := os.Hostname()
	return host
}

// isAlive reports whether a lease owner may still be running: owners on
// another host are trusted until their lease expires; on this host a
// missing process is dead now (a kill -9 leaves no heartbeat to wait for).
func isAlive(owner string) bool {
	parts := strings.Split(owner, ":")
	if len(parts) != 3 {
		return true
	}
	if parts[0] != workerHost() {
		return true
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid == os.Getpid() {
		return true
	}
	return syscall.Kill(pid, 0) != syscall.ESRCH
}
