package cli

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"optimize/internal/pgtest"
)

// Three worker processes and a `study wait` run a study on a PostgreSQL
// server of the test's own, which is stopped mid-study and started again
// on the same port a few seconds later: once with a fast shutdown (every
// session is ended with an error, its transaction rolled back), once with
// an immediate one (the server is killed; connections just break, and it
// recovers from its log on the next start). Every process waits for it
// and goes on: the workers exit 0, `study wait` returns, and the study
// ends with exactly its total of complete trials, each number once, none
// running.
func TestWorkersSurvivePostgresRestart(t *testing.T) {
	optimizeBin, workerBin := workerBinaries(t)
	srv := pgtest.StartServer(t)
	for _, mode := range []string{"fast", "immediate"} {
		t.Run(mode, func(t *testing.T) { survive(t, optimizeBin, workerBin, srv, mode) })
	}
}

func survive(t *testing.T, optimizeBin, workerBin string, srv *pgtest.Server, mode string) {
	dsn := srv.DSN("postgres")
	study := "outage-" + mode
	const total, outage = 60, 3 * time.Second
	if out, err := exec.Command(optimizeBin, "study", "create", "slo-cascade", "--trials", fmt.Sprint(total),
		"--name", study, "--storage", dsn, "--workers", "0").CombinedOutput(); err != nil {
		t.Fatalf("study create: %v\n%s", err, out)
	}
	began := time.Now()
	procs := make([]*proc, 3)
	for i := range procs {
		procs[i] = start(t, fmt.Sprintf("worker %d", i), workerBin, nil, "--storage", dsn, "--study", study)
	}
	wait := start(t, "study wait", optimizeBin, nil, "study", "wait", study, "--storage", dsn, "--poll", "100ms")

	st, err := waitForTrials(dsn, study, 3)
	if err != nil {
		t.Fatalf("no 3 trials complete: %v\n%s", err, procs[0].err.String())
	}
	row, err := st.StudyByName(study)
	if err != nil {
		t.Fatal(err)
	}
	before, _, err := st.Counts(row.ID)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(mode); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	time.Sleep(outage)
	if err := srv.Start(); err != nil {
		t.Fatalf("restart: %v\n%s", err, srv.Log())
	}
	t.Logf("server stopped (%s) with %d/%d trials complete, started again %v later", mode, before, total, time.Since(stopped).Round(100*time.Millisecond))
	if before >= total {
		t.Fatal("the study was complete before the server stopped: nothing tested")
	}

	for _, p := range append(procs, wait) {
		if err := <-p.done; err != nil {
			t.Fatalf("%s ended with %v, want it to survive the restart\nstderr:\n%s", p.name, err, p.err.String())
		}
	}
	lost := 0
	for _, p := range procs {
		if strings.Contains(p.err.String(), "connection lost") {
			lost++
		}
	}
	if lost == 0 {
		t.Errorf("no worker reported a lost connection: the outage missed them\n%s", procs[0].err.String())
	}
	trialsExactlyOnce(t, dsn, study, total)
	t.Logf("%d of 3 workers saw the connection lost; study complete %v after they started", lost, time.Since(began).Round(100*time.Millisecond))
}
