package studies

import (
	"fmt"

	"optimize/studies/report"
)

// Migrate brings the database to this release's schema and back-fills
// what older releases did not store: each complete trial's constraint
// violations, computed from its stored metrics against the study's
// baseline exactly as its stored score was. `study create`, `study
// resume` and `serve` call it; workers do not (concurrent migrations of
// a fresh database race), and a report on a database not yet migrated
// computes the violations in memory instead. A study whose template is
// not loaded is left for a later Migrate that has it, and said so.
func (e *Env) Migrate() error {
	if err := e.Store.Migrate(); err != nil {
		return err
	}
	names, err := e.Store.Unjudged()
	if err != nil {
		return err
	}
	for _, name := range names {
		row, err := e.Store.StudyByName(name)
		if err != nil {
			return err
		}
		if _, err := e.Registry.Get(row.Template); err != nil {
			// A study of a template this process has not loaded (one from
			// another --templates-dir) is back-filled by a later command
			// that has it; until then its reports judge it in memory.
			fmt.Fprintf(e.Progress, "study %s: violations not back-filled yet: %v\n", name, err)
			continue
		}
		r, err := report.Load(e.Store, e.Registry, name)
		if err != nil {
			return fmt.Errorf("study %s: back-fill violations: %v", name, err)
		}
		if err := e.Store.StoreViolations(r.Backfill()); err != nil {
			return err
		}
	}
	return nil
}
