package server

import (
	"sync"

	"optimize/studies"
	"optimize/studies/report"
)

// reports keeps the last report built for each of a few studies, with
// the storage fingerprint it was built at: a dashboard polling a study of
// thousands of trials is answered without decoding them again, and any
// change to the study (a trial, a validation) builds it anew.
type reports struct {
	env *studies.Env
	mu  sync.Mutex
	by  map[string]cached
	seq int
}

type cached struct {
	fingerprint string
	report      *report.Report
	used        int
}

// keep bounds the cache: a report of 5,000 trials holds their per-seed
// metrics, tens of megabytes.
const keep = 4

func newReports(env *studies.Env) *reports { return &reports{env: env, by: map[string]cached{}} }

// get returns the study's report with its stored evidence. Reports are
// shared: callers only read them.
func (c *reports) get(name string) (*report.Report, error) {
	row, err := c.env.Store.StudyByName(name)
	if err != nil {
		return nil, err
	}
	fp, err := c.env.Store.Fingerprint(row.ID)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if hit, ok := c.by[name]; ok && hit.fingerprint == fp {
		c.seq++
		hit.used = c.seq
		c.by[name] = hit
		c.mu.Unlock()
		return hit.report, nil
	}
	c.mu.Unlock()
	rep, err := report.Load(c.env.Store, c.env.Registry, name)
	if err == nil {
		err = c.env.LoadEvidence(rep)
	}
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	c.by[name] = cached{fingerprint: fp, report: rep, used: c.seq}
	for len(c.by) > keep {
		oldest := ""
		for n, e := range c.by {
			if oldest == "" || e.used < c.by[oldest].used {
				oldest = n
			}
		}
		delete(c.by, oldest)
	}
	return rep, nil
}
