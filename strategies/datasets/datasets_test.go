package datasets_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"optimize/internal/testkit"
	"optimize/simcore/workload"
	"optimize/strategies/datasets"
)

func lookup(t *testing.T, name string) datasets.Dataset {
	t.Helper()
	d, ok := datasets.Lookup(name)
	if !ok {
		t.Fatalf("no dataset %q", name)
	}
	return d
}

// Every entry names a readable format, a pinned commit and hash, a
// licence with its notice and a citation; its URL is the raw file at that
// commit.
func TestCatalogEntriesArePinned(t *testing.T) {
	hex64, hex40 := regexp.MustCompile(`^[0-9a-f]{64}$`), regexp.MustCompile(`^[0-9a-f]{40}$`)
	seen := map[string]bool{}
	for _, d := range datasets.All() {
		if seen[d.Name] {
			t.Errorf("%s: listed twice", d.Name)
		}
		seen[d.Name] = true
		if !slices.Contains(workload.TraceFormats, d.Format) || !hex64.MatchString(d.SHA256) || !hex40.MatchString(d.Commit) ||
			d.Size <= 0 || d.Rows <= 0 || d.Licence == "" || d.Notice == "" || d.Citation == "" || d.Description == "" {
			t.Errorf("%s: incomplete entry %+v", d.Name, d)
		}
		if want := "https://raw.githubusercontent.com/" + d.Repo + "/" + d.Commit + "/" + d.Path; d.URL() != want || datasets.SourceURL(d, "") != want {
			t.Errorf("%s: URL %s, want %s", d.Name, d.URL(), want)
		}
		if got := datasets.SourceURL(d, "http://127.0.0.1:9/mirror/"); got != "http://127.0.0.1:9/mirror/"+d.File() {
			t.Errorf("%s: under a mirror %s", d.Name, got)
		}
	}
	for _, name := range []string{"mooncake-conversation", "mooncake-synthetic", "azure-conv-2023", "azure-code-2023"} {
		if !seen[name] {
			t.Errorf("no dataset %s", name)
		}
	}
}

// The cache is $OPTIMIZE_CACHE_DIR, else the user cache folder's
// optimize/; a dataset lives at datasets/NAME/<upstream file name>.
func TestCacheFolder(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(datasets.CacheEnv, "")
	t.Setenv("XDG_CACHE_HOME", dir)
	if got, err := datasets.CacheDir(); err != nil || got != filepath.Join(dir, "optimize") {
		t.Errorf("without $%s: %q (%v), want %s/optimize", datasets.CacheEnv, got, err, dir)
	}
	t.Setenv(datasets.CacheEnv, "/elsewhere")
	if got, err := datasets.CacheDir(); err != nil || got != "/elsewhere" {
		t.Errorf("with $%s=/elsewhere: %q (%v)", datasets.CacheEnv, got, err)
	}
	d := lookup(t, "azure-conv-2023")
	if got := d.PathIn("/c"); got != "/c/datasets/azure-conv-2023/AzureLLMInferenceTrace_conv.csv" {
		t.Errorf("path in the cache: %s", got)
	}
}

// A dataset not in the cache is an error that says how to fetch it, on
// one line.
func TestLocateSaysHowToFetch(t *testing.T) {
	t.Setenv(datasets.CacheEnv, t.TempDir())
	_, err := datasets.Locate(lookup(t, "mooncake-conversation"))
	want := "dataset not fetched yet: run 'optimize workload fetch mooncake-conversation' (3.0 MB from github.com/kvcache-ai/Mooncake, Apache-2.0)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// Fetched from a server (a mirror of the shared copies on 127.0.0.1), a
// dataset lands in the cache at its path, checked; fetched again, it is
// not downloaded again.
func TestFetchLandsInTheCacheOnce(t *testing.T) {
	mirror, requests := testkit.DatasetMirror(t)
	cache := t.TempDir()
	t.Setenv(datasets.CacheEnv, cache)
	d := lookup(t, "mooncake-conversation")
	res, err := datasets.Fetch(context.Background(), d, cache, mirror)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Downloaded || res.Path != d.PathIn(cache) || res.From != mirror+"/conversation_trace.jsonl" || requests() != 1 {
		t.Fatalf("fetch: %+v after %d requests", res, requests())
	}
	if err := datasets.Verify(d, res.Path); err != nil {
		t.Fatal(err)
	}
	if file, err := datasets.Locate(d); err != nil || file != res.Path {
		t.Fatalf("located at %q (%v), want %s", file, err, res.Path)
	}
	entries, _ := os.ReadDir(filepath.Dir(res.Path))
	if len(entries) != 1 {
		t.Errorf("the dataset's folder holds %d files, want the dataset alone", len(entries))
	}
	again, err := datasets.Fetch(context.Background(), d, cache, mirror)
	if err != nil || again.Downloaded || again.Path != res.Path || requests() != 1 {
		t.Fatalf("fetched again: %+v (%v) after %d requests, want no download", again, err, requests())
	}
	// A file that is not the dataset (same size, other bytes) is replaced.
	if err := os.WriteFile(res.Path, make([]byte, d.Size), 0o644); err != nil {
		t.Fatal(err)
	}
	if again, err := datasets.Fetch(context.Background(), d, cache, mirror); err != nil || !again.Downloaded || requests() != 2 {
		t.Fatalf("a damaged file fetched again: %+v (%v) after %d requests", again, err, requests())
	}
	if err := datasets.Verify(d, res.Path); err != nil {
		t.Fatal(err)
	}
}

// A server that serves other bytes (of the same length, or longer) gives
// a one-line error naming the expected and the received hash, and leaves
// nothing in the cache.
func TestFetchWrongBytesKeepsNothing(t *testing.T) {
	d := lookup(t, "azure-code-2023")
	good, err := os.ReadFile(testkit.SharedTrace(t, d.Name))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{
		"one byte changed": append(append([]byte{}, good[:100]...), append([]byte{good[100] ^ 1}, good[101:]...)...),
		"longer":           append(append([]byte{}, good...), "\n2023-11-16 19:14:20.0000000,1,1\n"...),
		"shorter":          good[:len(good)-1],
	} {
		t.Run(strings.ReplaceAll(name, " ", "-"), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(body) }))
			defer srv.Close()
			cache := t.TempDir()
			_, err := datasets.Fetch(context.Background(), d, cache, srv.URL)
			var sum *datasets.ChecksumError
			if !errors.As(err, &sum) || strings.Contains(err.Error(), "\n") ||
				!strings.Contains(err.Error(), "expected sha256 "+d.SHA256) || !strings.Contains(err.Error(), "got sha256 "+sum.GotHash) || sum.GotHash == d.SHA256 {
				t.Fatalf("got %v, want a one-line checksum error naming both hashes", err)
			}
			if entries, _ := os.ReadDir(cache); len(entries) != 1 || entries[0].Name() != "datasets" {
				t.Fatalf("the cache holds %v", entries)
			}
			if entries, _ := os.ReadDir(filepath.Join(cache, "datasets")); len(entries) != 0 {
				t.Errorf("after a failed fetch the cache holds %v", entries)
			}
		})
	}
}

// A file the server does not have is a one-line error naming the URL and
// the status.
func TestFetchNotFound(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	cache := t.TempDir()
	_, err := datasets.Fetch(context.Background(), lookup(t, "azure-conv-2023"), cache, srv.URL)
	want := "dataset azure-conv-2023: GET " + srv.URL + "/AzureLLMInferenceTrace_conv.csv: 404 Not Found"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	if entries, _ := os.ReadDir(filepath.Join(cache, "datasets")); len(entries) != 0 {
		t.Errorf("after a 404 the cache holds %v", entries)
	}
}
