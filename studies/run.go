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

	"optimize/search"
	"optimize/simcore/metrics"
	"optimize/storage"
)

// Run works on the study until it has its total of complete trials or ctx
// is cancelled (trials in flight then finish and are recorded). Trials are
// claimed one at a time through the database, so any number of processes
// may run the same study.
func (e *Env) Run(ctx context.Context, row *storage.StudyRow) error {
	ev, err := e.evaluator(row)
	if err != nil {
		return err
	}
	smp, err := e.sampler(row, ev.tpl)
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
func (e *Env) workLoop(ctx context.Context, row *storage.StudyRow, ev *evaluator, smp *search.Sampler, p *progress) error {
	for ctx.Err() == nil {
		claim, err := e.Store.ClaimTrial(row, e.Worker, e.lease(), isAlive)
		if err != nil {
			return err
		}
		for _, f := range claim.Failed {
			if f.GoptunaID > 0 {
				_ = smp.Fail(f.GoptunaID) // no longer a pending point for the liar
			}
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
// renewing the lease, and records the result.
func (e *Env) runTrial(claim storage.Claim, ev *evaluator, smp *search.Sampler) error {
	t := claim.Trial
	var values []float64
	var gid int
	var err error
	if claim.Rescue != nil {
		if values, err = storage.DecodeParams(claim.Rescue); err == nil {
			gid, err = smp.AskFixed(t.Number, values)
		}
	} else {
		gid, values, err = smp.Ask(t.Number)
	}
	if err != nil {
		_ = e.Store.Release(t)
		return fmt.Errorf("trial %d: propose: %v", t.Number, err)
	}
	if err := e.Store.SetProposal(t, gid, values); err != nil {
		// Nothing records gid yet: fail it here, or the liar counts it
		// as pending for ever.
		_ = smp.Fail(gid)
		_ = e.Store.Release(t)
		return fmt.Errorf("trial %d: %v", t.Number, err)
	}
	stop := e.heartbeat(t)
	mean, perSeed, judged, err := e.evaluate(ev, values)
	stop()
	if err != nil {
		_ = smp.Fail(gid)
		_ = e.Store.Release(t)
		return fmt.Errorf("trial %d: %v", t.Number, err)
	}
	ranges := make([][2]float64, len(ev.tpl.Objectives))
	for k, o := range ev.tpl.Objectives {
		sp := Spread(perSeed, metricOf(o.Metric))
		ranges[k] = [2]float64{sp.Min, sp.Max}
	}
	out := storage.Outcome{Score: judged.Score(search.DefaultViolationWeight), Objectives: judged.Objectives,
		Violations: judged.Violations, Violation: judged.Violation(), Ranges: ranges, Mean: mean, Seeds: ev.seeds, PerSeed: perSeed}
	if err := e.Store.Complete(t, out); err != nil {
		_ = smp.Fail(gid)
		if errors.Is(err, storage.ErrLeaseLost) {
			return nil // rescued by another worker meanwhile: its copy counts
		}
		return err // the trial stays running: rescued once its lease expires
	}
	return smp.TellObjectives(gid, judged)
}

// evaluate runs values on every seed and judges the mean against the
// baseline.
func (e *Env) evaluate(ev *evaluator, values []float64) (metrics.Summary, []metrics.Summary, search.Evaluation, error) {
	cfg, err := ev.config(values)
	if err != nil {
		return metrics.Summary{}, nil, search.Evaluation{}, err
	}
	mean, perSeed, err := ev.run(cfg)
	if err != nil {
		return metrics.Summary{}, nil, search.Evaluation{}, err
	}
	judged, err := ev.judge(&mean)
	return mean, perSeed, judged, err
}

// heartbeat renews t's lease until the returned stop is called.
func (e *Env) heartbeat(t *storage.TrialRow) (stop func()) {
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
