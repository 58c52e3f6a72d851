package cli

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"optimize/storage"
)

// A worker process sent a real SIGTERM (as Kubernetes sends one to a pod it
// evicts) while it runs trials: its trials in flight finish and are
// recorded by it, it exits with ExitStopped and one line, nothing is left
// running; a second worker then finishes the study to exactly its total,
// every trial number complete once.
func testWorkerSIGTERM(t *testing.T, dsn string) {
	optimizeBin, workerBin := workerBinaries(t)
	const study, total = "term", 60
	if out, err := exec.Command(optimizeBin, "study", "create", "slo-cascade", "--trials", fmt.Sprint(total),
		"--name", study, "--storage", dsn, "--workers", "0").CombinedOutput(); err != nil {
		t.Fatalf("study create: %v\n%s", err, out)
	}
	w := start(t, "worker", workerBin, nil, "--storage", dsn, "--study", study, "--concurrency", "2")
	st, err := waitForTrials(dsn, study, 1)
	if err != nil {
		t.Fatalf("no trial completed: %v\n%s", err, w.err.String())
	}
	defer st.Close()
	row, err := st.StudyByName(study)
	if err != nil {
		t.Fatal(err)
	}
	trials := func() []storage.Trial {
		rows, err := st.Trials(row.ID)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	// A trial whose parameters are proposed is being simulated.
	var inFlight []storage.Trial
	for deadline := time.Now().Add(30 * time.Second); len(inFlight) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the worker never had a trial in flight\n%s", w.err.String())
		}
		for _, tr := range trials() {
			if tr.State == storage.TrialRunning && tr.Params != nil {
				inFlight = append(inFlight, tr)
			}
		}
	}
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = <-w.done
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitStopped {
		t.Fatalf("worker after SIGTERM: %v (want exit code %d)\nstderr:\n%s", err, ExitStopped, w.err.String())
	}
	lines := strings.Split(strings.TrimSpace(w.err.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "worker: stopped by a signal with ") || w.out.Len() != 0 {
		t.Errorf("stderr ends %q, stdout %q: want one line saying the worker stopped, nothing on stdout", last, w.out.String())
	}

	after := trials()
	if len(after) >= total {
		t.Fatalf("the worker ran all %d trials before SIGTERM landed: nothing tested", len(after))
	}
	byNumber := map[int]storage.Trial{}
	for _, tr := range after {
		byNumber[tr.Number] = tr
	}
	for n := range len(after) {
		tr, ok := byNumber[n]
		if !ok || tr.State != storage.TrialComplete {
			t.Errorf("after SIGTERM trial %d is %+v, want complete (numbers 0..%d, each once)", n, tr.State, len(after)-1)
		}
	}
	for _, f := range inFlight {
		if tr := byNumber[f.Number]; tr.State != storage.TrialComplete || tr.Worker != f.Worker || storage.EncodeParams(tr.Params) != storage.EncodeParams(f.Params) {
			t.Errorf("trial %d, in flight at SIGTERM, ended %s by %s, want complete by %s with its parameters", f.Number, tr.State, tr.Worker, f.Worker)
		}
	}
	t.Logf("SIGTERM with %d trial(s) in flight: exit %d, %d/%d trials complete, none running", len(inFlight), ee.ExitCode(), len(after), total)

	w2 := start(t, "second worker", workerBin, nil, "--storage", dsn, "--study", study, "--concurrency", "2")
	if err := <-w2.done; err != nil {
		t.Fatalf("second worker: %v\n%s", err, w2.err.String())
	}
	trialsExactlyOnce(t, dsn, study, total)
}

// trialsExactlyOnce checks that study name in dsn has its total: exactly
// total trial rows, numbered 0..total-1, every one complete (none
// running, none failed and re-run, no number twice).
func trialsExactlyOnce(t *testing.T, dsn, name string, total int) {
	t.Helper()
	st, err := storage.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	row, err := st.StudyByName(name)
	if err != nil {
		t.Fatal(err)
	}
	if row.TrialsTotal != total {
		t.Errorf("study %s has total %d, want %d", name, row.TrialsTotal, total)
	}
	rows, err := st.Trials(row.ID)
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]int, total)
	for _, tr := range rows {
		if tr.Number < 0 || tr.Number >= total || tr.State != storage.TrialComplete {
			t.Errorf("trial %d is %s: want only complete trials numbered 0..%d", tr.Number, tr.State, total-1)
			continue
		}
		seen[tr.Number]++
	}
	for n, c := range seen {
		if c != 1 {
			t.Errorf("trial %d complete %d times, want once", n, c)
		}
	}
	if complete, running, err := st.Counts(row.ID); err != nil || complete != int64(total) || running != 0 {
		t.Errorf("counts: %d complete, %d running, %v; want %d complete, none running", complete, running, err, total)
	}
}

func TestWorkerSIGTERMSQLite(t *testing.T) {
	testWorkerSIGTERM(t, filepath.Join(t.TempDir(), "term.db"))
}

func TestWorkerSIGTERMPostgres(t *testing.T) {
	testWorkerSIGTERM(t, pgTestDB(t))
}
