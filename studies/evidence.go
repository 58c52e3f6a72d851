package studies

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
	"optimize/storage"
	"optimize/strategies/workloads"
	"optimize/studies/report"
)

// The evidence a study gives for its winner (validation on held-out seeds
// and regimes, ablation by component) is a set of simulations, each one
// configuration on one seed. Each is stored as soon as it finishes, keyed
// by what it is, so an interrupted command resumes where it stopped and a
// report is rebuilt from the stored runs without simulating again.

// storedRequest is a request for evidence as a study stores it: each
// kind's request type (validationRequest, ablationRequest,
// maxRateRequest) says its kind and what `show` lists of it.
type storedRequest interface {
	evidence() report.Evidence
	listed() report.EvidenceRun
}

func (validationRequest) evidence() report.Evidence { return report.EvidenceValidation }
func (ablationRequest) evidence() report.Evidence   { return report.EvidenceAblation }
func (maxRateRequest) evidence() report.Evidence    { return report.EvidenceMaxRate }

func (q validationRequest) listed() report.EvidenceRun {
	run := report.EvidenceRun{Kind: q.kind(), Trials: q.Trials, Seeds: q.Seeds, Regimes: q.Regimes}
	for _, w := range q.Worlds {
		run.Worlds = append(run.Worlds, w.String())
	}
	return run
}

func (q ablationRequest) listed() report.EvidenceRun {
	return report.EvidenceRun{Kind: report.KindAblation, Trials: []int{q.Trial}}
}

func (q maxRateRequest) listed() report.EvidenceRun {
	return report.EvidenceRun{Kind: report.KindMaxRate, Trials: []int{q.Trial}, Seeds: q.Seeds}
}

// saveRequest records req as the study's latest request of its kind: the
// one encoding of a request (JSON).
func (e *Env) saveRequest(studyID uint, req storedRequest) error {
	js, err := json.Marshal(req)
	if err != nil {
		return err
	}
	return e.Store.SaveEvidence(studyID, string(req.evidence()), string(js))
}

// decodeRequest reads a stored request of type R: the one decoding of a
// request.
func decodeRequest[R storedRequest](js string) (R, error) {
	var req R
	err := json.Unmarshal([]byte(js), &req)
	return req, err
}

// requestDecoders decode a stored request by its kind (every one of
// report.Evidences has one: TestEveryEvidenceKindDecodes).
var requestDecoders = map[report.Evidence]func(string) (storedRequest, error){
	report.EvidenceValidation: decoderOf[validationRequest],
	report.EvidenceAblation:   decoderOf[ablationRequest],
	report.EvidenceMaxRate:    decoderOf[maxRateRequest],
}

// decoderOf is decodeRequest[R] as one of requestDecoders.
func decoderOf[R storedRequest](js string) (storedRequest, error) { return decodeRequest[R](js) }

// job is one evidence simulation.
type job struct {
	key  string
	seed int64
	cfg  cluster.Config
	wl   *workloads.Workload
}

// runs holds evidence results by key and seed.
type runs map[storage.RunKey]metrics.Summary

// seeds returns key's runs in seeds order; false unless all are there.
func (r runs) seeds(key string, seeds []int64) ([]metrics.Summary, bool) {
	out := make([]metrics.Summary, len(seeds))
	for i, s := range seeds {
		m, ok := r[storage.RunKey{Key: key, Seed: s}]
		if !ok {
			return nil, false
		}
		out[i] = m
	}
	return out, true
}

// storedRuns reads the study's stored evidence runs whose key starts with
// prefix.
func (e *Env) storedRuns(row *storage.Study, prefix string) (runs, error) {
	stored, err := e.Store.EvidenceRuns(row.ID, prefix)
	return runs(stored), err
}

// runJobs runs the jobs not stored yet on e.Workers goroutines, storing
// each as it finishes, with a progress bar labelled label. When ctx ends,
// jobs in flight finish and are stored; the rest are left for next time.
func (e *Env) runJobs(ctx context.Context, row *storage.Study, label string, jobs []job) error {
	done, err := e.storedRuns(row, "")
	if err != nil {
		return err
	}
	var todo []job
	for _, j := range jobs {
		if _, ok := done[storage.RunKey{Key: j.key, Seed: j.seed}]; !ok {
			todo = append(todo, j)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	fmt.Fprintf(e.Progress, "%s: %d simulations (%d stored already)\n", label, len(todo), len(jobs)-len(todo))
	bar := progressbar.NewOptions(len(todo),
		progressbar.OptionSetWriter(e.Progress),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
	defer bar.Finish()
	queue := make(chan job)
	errs := make(chan error, len(todo))
	var wg sync.WaitGroup
	for range max(1, e.Workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				m, err := simulate(j.cfg, j.wl, j.seed)
				if err == nil {
					err = e.Store.PutEvidenceRun(row.ID, j.key, j.seed, m)
				}
				if err != nil {
					errs <- fmt.Errorf("%s, seed %d: %v", j.key, j.seed, err)
				}
				_ = bar.Add(1)
			}
		}()
	}
feed:
	for _, j := range todo {
		select {
		case <-ctx.Done():
			break feed
		case queue <- j:
		}
	}
	close(queue)
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	return ctx.Err()
}

// LoadEvidence adds the study's stored evidence to r (for `show`,
// `export` and the API), simulating nothing: the latest validation of each
// kind and the latest ablation, each with when it ran, and the list of
// every request. Evidence that cannot be rebuilt (its workload file moved,
// say) does not hide the rest of the study: r.EvidenceError says why it is
// missing.
func (e *Env) LoadEvidence(r *report.Report) error {
	r.Validation, r.Ablation, r.Validations, r.EvidenceRuns, r.MaxRate = nil, nil, nil, nil, nil
	var errs []string
	requests, err := e.Store.EvidenceRequests(r.Study.ID)
	if err != nil {
		r.EvidenceError = err.Error()
		return nil
	}
	var stored runs
	if len(requests) > 0 {
		if stored, err = e.storedRuns(r.Study, ""); err != nil {
			r.EvidenceError = err.Error()
			return nil
		}
	}
	// latest is each kind's latest request; requests are oldest first.
	latest := map[report.EvidenceKind]storage.EvidenceRequest{}
	var lastValidation report.EvidenceKind
	for _, q := range requests {
		run, err := evidenceRun(q)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: study %s: stored request: %v", q.Kind, r.Study.Name, err))
			continue
		}
		r.EvidenceRuns = append(r.EvidenceRuns, run)
		latest[run.Kind] = q
		if run.Kind.Evidence() == report.EvidenceValidation {
			lastValidation = run.Kind
		}
	}
	for _, kind := range report.ValidationKinds {
		q, ok := latest[kind]
		if !ok {
			continue
		}
		v, err := e.storedValidation(r, q.Request, stored)
		if err != nil {
			errs = append(errs, fmt.Sprintf("validation (%s): %v", kind.Command(), err))
			continue
		}
		v.RanAt = &q.RanAt
		r.Validations = append(r.Validations, v)
		if kind == lastValidation {
			r.Validation = v
		}
	}
	if q, ok := latest[report.KindAblation]; ok {
		if r.Ablation, err = e.storedAblation(r, q.Request, stored); err != nil {
			errs = append(errs, "ablation: "+err.Error())
		} else {
			r.Ablation.RanAt = &q.RanAt
		}
	}
	if q, ok := latest[report.KindMaxRate]; ok {
		if r.MaxRate, err = e.storedMaxRate(r, q.Request, stored); err != nil {
			errs = append(errs, "max rate: "+err.Error())
		} else {
			r.MaxRate.RanAt = &q.RanAt
		}
	}
	r.EvidenceError = strings.Join(errs, "; ")
	return nil
}

// evidenceRun decodes a stored request for the list of runs.
func evidenceRun(q storage.EvidenceRequest) (report.EvidenceRun, error) {
	kind, err := report.ParseEvidence(q.Kind)
	if err != nil {
		return report.EvidenceRun{RanAt: q.RanAt}, err
	}
	req, err := requestDecoders[kind](q.Request)
	if err != nil {
		return report.EvidenceRun{RanAt: q.RanAt}, err
	}
	run := req.listed()
	run.RanAt = q.RanAt
	return run, nil
}
