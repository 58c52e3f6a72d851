package studies

import "optimize/studies/report"

// What the external tests (package studies_test) need of the package's
// insides.

// GoptunaName names the sampler's study of row.
var GoptunaName = goptunaName

// SamplerOptions are the sampler options a study runs with.
var SamplerOptions = samplerOptions

// ValidationJobs counts the simulations a validation of trials on seeds,
// at the study's workload and at regimes, needs.
func (e *Env) ValidationJobs(r *report.Report, seeds []int64, trials []int, regimes []string) (int, error) {
	p, err := e.validationPlan(r, validationRequest{Seeds: seeds, Trials: trials, Regimes: regimes})
	if err != nil {
		return 0, err
	}
	return len(p.jobs), nil
}
