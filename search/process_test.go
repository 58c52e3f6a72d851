package search

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/c-bata/goptuna"
)

const (
	helperDBEnv     = "SEARCH_HELPER_DB"
	helperWorkerEnv = "SEARCH_HELPER_WORKER"
	trialsPerWorker = 5
)

// Several processes start at once on one migrated SQLite file: each
// creates-or-loads the same study and runs its own trial numbers. None may
// die of the startup race, and every trial must end up COMPLETE in one study.
func TestSeveralProcessesShareOneStudy(t *testing.T) {
	if os.Getenv(helperDBEnv) != "" {
		t.Skip("inside a helper process")
	}
	path := filepath.Join(t.TempDir(), "shared.db")
	storage := openStorageAt(t, path, true)

	const workers = 4
	cmds := make([]*exec.Cmd, workers)
	for w := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcessRunsTrials$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperDBEnv+"="+path, helperWorkerEnv+"="+strconv.Itoa(w))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[w] = cmd
	}
	for w, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("worker %d: %v", w, err)
		}
	}

	id, err := storage.GetStudyIDFromName("multi")
	if err != nil {
		t.Fatal(err)
	}
	trials, err := storage.GetAllTrials(id)
	if err != nil {
		t.Fatal(err)
	}
	numbers := map[string]bool{}
	for _, tr := range trials {
		if tr.State != goptuna.TrialStateComplete {
			t.Fatalf("trial %d is %v", tr.Number, tr.State)
		}
		numbers[tr.SystemAttrs[AttrNumber]] = true
	}
	if len(trials) != workers*trialsPerWorker || len(numbers) != workers*trialsPerWorker {
		t.Fatalf("%d trials with %d distinct numbers, want %d", len(trials), len(numbers), workers*trialsPerWorker)
	}
	summaries, err := storage.GetAllStudySummaries()
	if err != nil || len(summaries) != 1 {
		t.Fatalf("%d studies (%v), want 1", len(summaries), err)
	}
}

// TestHelperProcessRunsTrials is the body of one worker process.
func TestHelperProcessRunsTrials(t *testing.T) {
	path := os.Getenv(helperDBEnv)
	if path == "" {
		t.Skip("only runs as a helper process")
	}
	worker, _ := strconv.Atoi(os.Getenv(helperWorkerEnv))
	storage := openStorageAt(t, path, false)
	s, err := NewSampler(storage, "multi", mixedSpace(), MethodTPE, 42, Options{StartupTrials: 4})
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < trialsPerWorker; k++ {
		number := worker*trialsPerWorker + k
		id, values, err := s.Ask(number)
		if err != nil {
			t.Fatal(fmt.Errorf("worker %d: %w", worker, err))
		}
		if err := s.Tell(id, mixedObjective(s.space.Encode(values))); err != nil {
			t.Fatal(err)
		}
	}
}
