package testkit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"optimize/strategies/datasets"
)

// SharedDataEnv names the folder of the shared test data when it is not
// ../shared/data beside the module's folder.
const SharedDataEnv = "OPTIMIZE_SHARED_DATA"

// SharedData is the folder sub ("traces", "llm-d/deploy-config",
// "sim2real") of the shared test data: data fetched from other projects,
// which the repository does not carry. It is $OPTIMIZE_SHARED_DATA, else
// ../shared/data beside the module's folder (the folder holding go.mod,
// found from the test's working directory up). When the folder is missing
// the test fails if $CI is set (CI has the data beside the checkout, so
// its absence there is a broken setup) and is skipped otherwise.
func SharedData(t testing.TB, sub string) string {
	t.Helper()
	root, err := sharedRoot()
	dir := filepath.Join(root, filepath.FromSlash(sub))
	if err == nil {
		if info, statErr := os.Stat(dir); statErr != nil {
			err = statErr
		} else if !info.IsDir() {
			err = fmt.Errorf("%s is not a folder", dir)
		}
	}
	if err != nil {
		msg := fmt.Sprintf("shared test data %q not found (%v); it is ../shared/data beside the module's folder, or $%s", sub, err, SharedDataEnv)
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " ($CI is set: CI must have it)")
		} else {
			t.Skip(msg)
		}
	}
	return dir
}

// sharedRoot is the shared test data's folder: $OPTIMIZE_SHARED_DATA, or
// ../shared/data beside the module's folder.
func sharedRoot() (string, error) {
	if dir := os.Getenv(SharedDataEnv); dir != "" {
		return dir, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "data"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// sharedTraceFiles names each dataset's copy in the shared traces/
// folder (whose README gives the same sources, commits and licences as
// package datasets' catalog).
var sharedTraceFiles = map[string]string{
	"mooncake-conversation": "conversation_trace.jsonl",
	"mooncake-synthetic":    "synthetic_trace.jsonl",
	"azure-conv-2023":       "azure_conv.csv",
	"azure-code-2023":       "azure_code.csv",
}

// SharedTrace is the shared copy of the dataset called name (skipped or
// failed as SharedData is when the shared traces are missing).
func SharedTrace(t testing.TB, name string) string {
	t.Helper()
	file, ok := sharedTraceFiles[name]
	if !ok {
		t.Fatalf("testkit: dataset %q has no shared copy (add it to sharedTraceFiles)", name)
	}
	return filepath.Join(SharedData(t, "traces"), file)
}

// testDatasets is the dataset cache of this test binary's tests.
var testDatasets struct {
	once sync.Once
	dir  string
	err  error
}

// Datasets points the dataset cache ($OPTIMIZE_CACHE_DIR, for t) at a
// cache holding every dataset of the catalog, installed from the shared
// copies by datasets.Install, which checks each against its pinned
// checksum, as `workload fetch` does a download. The cache is one folder
// per shared-data folder under the system's temporary folder, kept
// between runs like Go's build cache (a file already there is used when
// its checksum matches, and installed again when it does not). Because it
// sets an environment variable for t, t cannot be parallel.
func Datasets(t testing.TB) {
	t.Helper()
	src := SharedData(t, "traces")
	testDatasets.once.Do(func() { testDatasets.dir, testDatasets.err = fillDatasets(src) })
	if testDatasets.err != nil {
		t.Fatal(testDatasets.err)
	}
	t.Setenv(datasets.CacheEnv, testDatasets.dir)
}

// fillDatasets installs every dataset from the shared traces folder src
// into the test cache and returns the cache's folder.
func fillDatasets(src string) (string, error) {
	sum := sha256.Sum256([]byte(src))
	cache := filepath.Join(os.TempDir(), "optimize-test-datasets-"+hex.EncodeToString(sum[:6]))
	for _, d := range datasets.All() {
		if datasets.Verify(d, d.PathIn(cache)) == nil {
			continue
		}
		file, ok := sharedTraceFiles[d.Name]
		if !ok {
			return "", fmt.Errorf("testkit: dataset %q has no shared copy (add it to sharedTraceFiles)", d.Name)
		}
		f, err := os.Open(filepath.Join(src, file))
		if err != nil {
			return "", fmt.Errorf("testkit: dataset %s: %v", d.Name, err)
		}
		_, err = datasets.Install(d, cache, f.Name(), f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("testkit: %v", err)
		}
	}
	return cache, nil
}

// DatasetMirror serves the shared copies of the datasets over HTTP on
// 127.0.0.1, each under its upstream file name (as $OPTIMIZE_DATASET_MIRROR
// or `workload fetch --mirror` expect a mirror to), until t ends. It
// returns the mirror's base URL and a count of the requests it answered.
func DatasetMirror(t testing.TB) (string, func() int64) {
	t.Helper()
	files := map[string]string{} // "/" + upstream name → shared copy
	for _, d := range datasets.All() {
		files["/"+d.File()] = SharedTrace(t, d.Name)
	}
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		file, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, file)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, requests.Load
}
