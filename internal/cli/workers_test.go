package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"optimize/internal/pgtest"
	"optimize/storage"
	"optimize/studies"
)

// Process-level tests of several `worker` processes on one study: real
// binaries, real signals, real databases. The PostgreSQL ones need a server:
// $OPTIMIZE_TEST_POSTGRES is an admin DSN (.ci/run starts a throwaway server
// and sets it); each test creates and drops its own database.

const pgEnv = "OPTIMIZE_TEST_POSTGRES"

// binaries builds cmd/optimize and cmd/worker once for the package (as
// buildBinary does, but shared: each link takes seconds).
var binaries = struct {
	once             sync.Once
	dir              string
	optimize, worker string
	err              error
}{}

func TestMain(m *testing.M) {
	code := m.Run()
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	if evidenceStudy.dir != "" {
		os.RemoveAll(evidenceStudy.dir)
	}
	os.Exit(code)
}

func workerBinaries(t *testing.T) (optimizeBin, workerBin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	b := &binaries
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "optimize-bins-"); b.err != nil {
			return
		}
		for pkg, out := range map[string]*string{"optimize/cmd/optimize": &b.optimize, "optimize/cmd/worker": &b.worker} {
			*out = filepath.Join(b.dir, filepath.Base(pkg))
			if msg, err := exec.Command("go", "build", "-o", *out, pkg).CombinedOutput(); err != nil {
				b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
				return
			}
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.optimize, b.worker
}

// pgTestDB is a fresh PostgreSQL database for t (see internal/pgtest).
func pgTestDB(t *testing.T) string { return pgtest.DB(t) }

// proc is a started process and its output.
type proc struct {
	name     string
	cmd      *exec.Cmd
	out, err bytes.Buffer
	done     chan error
}

func start(t *testing.T, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	// Only a guard against a hung process: with every package's tests
	// running at once on 2 cores, a worker finishing 57 trials of a
	// default-sampler (gp) study once took more than 90 s (10 s alone).
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	p := &proc{name: name, cmd: exec.CommandContext(ctx, bin, args...), done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait(); cancel() }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-ctx.Done() })
	return p
}

// createForWorkers creates a 12-trial slo-cascade study (and its baseline)
// without running trials.
func createForWorkers(t *testing.T, optimizeBin, dsn, name string) {
	t.Helper()
	out, err := exec.Command(optimizeBin, "study", "create", "slo-cascade", "--trials", "12", "--seeds", "42,43,44",
		"--name", name, "--storage", dsn, "--workers", "0").CombinedOutput()
	if err != nil {
		t.Fatalf("study create: %v\n%s", err, out)
	}
}

const lease = 2 * time.Second

// runWorkers runs n worker processes on a new 12-trial study in dsn. With
// kill, worker 0 (two trials at a time) starts first, the others once it
// has a trial in flight, and it is killed with SIGKILL while it runs a
// proposed trial (stopped first, so that the trial cannot finish); it and the others claim to be on different hosts,
// so its trials come back only through lease expiry. It checks that the
// study ends with exactly 12 complete trials under unique numbers, that
// every killed trial was re-run (same parameters) by another worker after
// its lease, and that no process saw a locked or busy database.
func runWorkers(t *testing.T, dsn string, n int, kill bool) {
	optimizeBin, workerBin := workerBinaries(t)
	const study = "w"
	createForWorkers(t, optimizeBin, dsn, study)
	began := time.Now()
	procs := make([]*proc, n)
	for i := range procs {
		host, conc := "machine-b", "1"
		if kill && i == 0 {
			host, conc = "machine-a", "2"
		}
		procs[i] = start(t, fmt.Sprintf("worker %d", i), workerBin, []string{studies.WorkerHostVar + "=" + host},
			"--storage", dsn, "--study", study, "--concurrency", conc, "--lease", lease.String())
		if kill && i == 0 {
			// Started together, the others sometimes claimed all 12
			// trials before worker 0 had connected (1 run in 20 on
			// PostgreSQL): they start once it has a trial in flight.
			waitInFlight(t, dsn, study, procs[0])
		}
	}
	var killed []storage.Trial
	if kill {
		killed = killMidTrial(t, dsn, study, procs[0])
	}
	for i, p := range procs {
		if kill && i == 0 {
			continue
		}
		if err := <-p.done; err != nil {
			t.Fatalf("%s: %v\n%s", p.name, err, p.err.String())
		}
	}
	elapsed := time.Since(began)
	for _, p := range procs {
		if s := strings.ToLower(p.err.String()); strings.Contains(s, "locked") || strings.Contains(s, "busy") {
			t.Errorf("%s saw a locked database:\n%s", p.name, p.err.String())
		}
	}

	_, trials := storedTrials(t, dsn, study)
	byWorker := map[string]int{}
	done := finishedTrials(t, trials)
	for _, tr := range done {
		byWorker[tr.Worker]++
	}
	if complete := len(done); complete != 12 {
		t.Fatalf("%d complete trials, want exactly the study total 12", complete)
	}
	for _, k := range killed {
		checkRescued(t, trials, k)
	}
	t.Logf("%d workers: %d trial rows, complete per worker %v, %d killed in flight, %v",
		n, len(trials), byWorker, len(killed), elapsed.Round(time.Millisecond))
}

// killMidTrial waits until p has a proposed trial in flight, kills p with
// SIGKILL and returns p's trials left running.
func killMidTrial(t *testing.T, dsn, study string, p *proc) []storage.Trial {
	t.Helper()
	st, err := waitForTrials(dsn, study, 2)
	if err != nil {
		t.Fatalf("no trial completed: %v\n%s", err, p.err.String())
	}
	defer st.Close()
	row, _ := st.StudyByName(study)
	mine := func() []storage.Trial { return inFlight(t, st, row.ID) }
	// Seen running, a trial could still commit before a SIGKILL landed (a
	// slo-cascade trial takes tens of ms): the worker is stopped first
	// (SIGSTOP), so that it writes nothing more, and given a moment for a
	// commit already sent to land; a trial still running then dies with
	// it. If none is, it resumes (SIGCONT) and the wait goes on.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("worker 0 never had a trial in flight\n%s", p.err.String())
		}
		if len(mine()) == 0 {
			continue
		}
		sendSignal(t, p, syscall.SIGSTOP)
		time.Sleep(100 * time.Millisecond)
		if len(mine()) > 0 {
			break
		}
		sendSignal(t, p, syscall.SIGCONT)
	}
	sendSignal(t, p, syscall.SIGKILL)
	<-p.done
	killed := mine()
	if len(killed) == 0 {
		t.Fatal("worker 0, stopped with a trial running, left none running after SIGKILL")
	}
	return killed
}

// inFlight are worker 0's (machine-a's) proposed trials still running.
func inFlight(t *testing.T, st *storage.Store, studyID uint) (running []storage.Trial) {
	t.Helper()
	trials, err := st.Trials(studyID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		if tr.State == storage.TrialRunning && strings.HasPrefix(tr.Worker, "machine-a:") && tr.Params != nil {
			running = append(running, tr)
		}
	}
	return running
}

// waitInFlight waits until worker 0 has a trial in flight.
func waitInFlight(t *testing.T, dsn, study string, p *proc) {
	t.Helper()
	st, err := storage.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	row, err := st.StudyByName(study)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); len(inFlight(t, st, row.ID)) == 0; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("worker 0 never started a trial\n%s", p.err.String())
		}
	}
}

func sendSignal(t *testing.T, p *proc, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%s: %v: %v", p.name, sig, err)
	}
}

// checkRescued: killed trial k is failed, and exactly one complete trial
// re-ran its parameters, on another worker, once its lease had expired.
func checkRescued(t *testing.T, trials []storage.Trial, k storage.Trial) {
	t.Helper()
	var redo []storage.Trial
	for _, tr := range trials {
		if tr.Number == k.Number && tr.State != storage.TrialFailed {
			t.Errorf("killed trial %d ended %s, want failed", k.Number, tr.State)
		}
		if tr.RescueOf == k.Number && tr.State == storage.TrialComplete {
			redo = append(redo, tr)
		}
	}
	if len(redo) != 1 {
		t.Fatalf("killed trial %d was re-run %d times, want once", k.Number, len(redo))
	}
	r := redo[0]
	if storage.EncodeParams(r.Params) != storage.EncodeParams(k.Params) || !strings.HasPrefix(r.Worker, "machine-b:") {
		t.Errorf("trial %d re-ran %v on %s, want %v on another worker", r.Number, r.Params, r.Worker, k.Params)
	}
	// (1 ms of slack: PostgreSQL keeps microseconds, rounded.)
	if wait := r.StartedAt.Sub(k.HeartbeatAt); wait < lease-time.Millisecond {
		t.Errorf("trial %d was taken over %v after its last heartbeat, before its %v lease expired", k.Number, wait, lease)
	} else {
		t.Logf("killed trial %d re-run as trial %d, %v after its last heartbeat", k.Number, r.Number, wait.Round(time.Millisecond))
	}
}

func TestWorkersPostgresThreeFinishOneStudy(t *testing.T) {
	runWorkers(t, pgTestDB(t), 3, false)
}

func TestWorkersPostgresKill9RescuedAfterLease(t *testing.T) {
	runWorkers(t, pgTestDB(t), 3, true)
}

func TestWorkersSQLiteFourProcesses(t *testing.T) {
	runWorkers(t, filepath.Join(t.TempDir(), "w.db"), 4, false)
}

func TestWorkersSQLiteFourProcessesKill9(t *testing.T) {
	runWorkers(t, filepath.Join(t.TempDir(), "w.db"), 4, true)
}

// A wrong DSN, an unreachable database or an unknown study: one line on
// stderr naming the problem, nothing on stdout, a non-zero exit, no stack
// trace and no password, from both `optimize study show` and `worker`.
func TestStorageErrorsAreOneLine(t *testing.T) {
	optimizeBin, workerBin := workerBinaries(t)
	dir := t.TempDir()
	sqlite := filepath.Join(dir, "s.db")
	createForWorkers(t, optimizeBin, sqlite, "other")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	type errCase struct {
		name, dsn string
		code      int
		say       string
		within    time.Duration
	}
	// Errors that need no connection come back without retrying: well
	// inside the 10 s retry window, with room for a loaded machine to start
	// the process.
	cases := []errCase{
		{"unsupported scheme", "mysql://u:s3cret@db.example/x", 2, "unsupported DSN", 4 * time.Second},
		{"malformed postgres DSN", "postgres://u:s3cret@127.0.0.1:port/x", 2, "invalid PostgreSQL DSN", 4 * time.Second},
		{"unreachable", "postgres://u:s3cret@" + closed + "/x?sslmode=disable", 1, "cannot connect", 5 * time.Second},
		{"unknown study, SQLite", sqlite, 2, `"ghost"`, 4 * time.Second},
		{"unknown study, no SQLite file", filepath.Join(dir, "none.db"), 2, `"ghost"`, 4 * time.Second},
	}
	if os.Getenv(pgEnv) != "" {
		pg := pgTestDB(t)
		u, _ := url.Parse(pg)
		u.Path += "_missing"
		cases = append(cases,
			errCase{"unknown study, empty PostgreSQL database", pg, 2, `"ghost"`, 2 * time.Second},
			errCase{"missing PostgreSQL database", u.String(), 1, "does not exist", 2 * time.Second})
	} else {
		t.Logf("PostgreSQL cases skipped: %s is unset", pgEnv)
	}
	for _, c := range cases {
		for _, cmd := range [][]string{
			{optimizeBin, "study", "show", "ghost", "--storage", c.dsn},
			{workerBin, "--study", "ghost", "--storage", c.dsn},
		} {
			t.Run(c.name+"/"+filepath.Base(cmd[0]), func(t *testing.T) {
				began := time.Now()
				p := start(t, c.name, cmd[0], []string{storage.ConnectTimeoutVar + "=1s"}, cmd[1:]...)
				err := <-p.done
				took := time.Since(began)
				code := -1
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				msg := p.err.String()
				if code != c.code || p.out.Len() != 0 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, c.say) {
					t.Fatalf("exit %d (want %d), stdout %q, stderr %q (want one line saying %q)", code, c.code, p.out.String(), msg, c.say)
				}
				if strings.Contains(msg, "goroutine ") || strings.Contains(msg, "panic") || strings.Contains(msg, "s3cret") {
					t.Fatalf("stderr leaks a stack trace or the password: %q", msg)
				}
				if took > c.within {
					t.Errorf("took %v, want under %v", took, c.within)
				}
			})
		}
	}
}
