package studies

import (
	"fmt"

	"optimize/strategies/production"
	"optimize/studies/report"
)

// Deployed runs complete trial n of r's study as production gets it from
// its llm-d export: vllm, epp and objectives (the files' text, nil when not written) read onto the study's
// base as simulate --vllm-args --epp-config reads them, with the trial's
// world kept and nothing else, on the study's workload and seeds with the
// study's workload cache — the runs a trial makes. A robust study's
// trials are judged over several scenarios: not run, said in Skipped.
func (e *Env) Deployed(r *report.Report, n int, vllm, epp, objectives []byte) (*report.Deployed, error) {
	d := &report.Deployed{Trial: n}
	if r.Study.Robust != nil {
		d.Skipped = fmt.Sprintf("study %s is robust (its trials are judged over %d scenarios); run MAPPING.md's command with only the world's --set lines in each", r.Study.Name, len(r.Study.Robust.Baselines)+1)
		return d, nil
	}
	c := r.ByNumber(n)
	if c == nil {
		return nil, fmt.Errorf("study %s has no complete trial %d", r.Study.Name, n)
	}
	ev, err := e.evaluator(r.Study)
	if err != nil {
		return nil, err
	}
	trial, err := r.TrialConfig(c)
	if err != nil {
		return nil, err
	}
	cfg, err := production.Deployed(ev.base, trial, production.ProductionFile{Name: report.VLLMArgsFile, Data: vllm},
		production.ProductionFile{Name: report.EPPConfigFile, Data: epp}, production.ProductionFile{Name: report.ObjectivesFile, Data: objectives})
	if err != nil {
		return nil, fmt.Errorf("trial %d %v", n, err)
	}
	if d.Mean, _, err = ev.run(cfg); err != nil {
		return nil, fmt.Errorf("trial %d as production gets it: %v", n, err)
	}
	return d, nil
}
