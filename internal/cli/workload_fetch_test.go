package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"optimize/internal/testkit"
	"optimize/strategies/datasets"
)

// `workload fetch NAME --mirror URL` downloads the dataset into the cache
// and says where it went, its licence and its citation; run again, it
// says the dataset is there and downloads nothing; the workload then runs.
func TestWorkloadFetchThroughAMirror(t *testing.T) {
	mirror, requests := testkit.DatasetMirror(t)
	cache := t.TempDir()
	t.Setenv(datasets.CacheEnv, cache)
	t.Setenv(datasets.MirrorEnv, "")
	d, _ := datasets.Lookup("mooncake-conversation")
	code, out, errOut := run(t, "workload", "fetch", "mooncake-conversation", "--mirror", mirror)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"mooncake-conversation: downloaded 3.0 MB from " + mirror + "/conversation_trace.jsonl, sha256 " + d.SHA256 + " verified",
		d.PathIn(cache), "Apache-2.0: Copyright Moonshot AI", "USENIX FAST 2025"} {
		if !strings.Contains(out, want) {
			t.Errorf("fetch output has no %q:\n%s", want, out)
		}
	}
	if err := datasets.Verify(d, d.PathIn(cache)); err != nil || requests() != 1 {
		t.Fatalf("after fetch: %v, %d requests", err, requests())
	}
	code, out, errOut = run(t, "workload", "fetch", "mooncake-conversation", "--mirror", mirror)
	if code != 0 || !strings.Contains(out, "mooncake-conversation: already fetched") || requests() != 1 {
		t.Fatalf("fetched again: exit %d, %d requests:\n%s%s", code, requests(), out, errOut)
	}
	code, out, errOut = run(t, "workload", "fetch", "--list")
	if code != 0 || !regexpLine(out, `mooncake-conversation +fetched `) || !regexpLine(out, `azure-conv-2023 +not fetched `) {
		t.Fatalf("fetch --list: exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "simulate", "--workload", "mooncake-conversation?window=0s-30s", "--num-instances", "2")
	if code != 0 || !strings.Contains(out, "completed") {
		t.Fatalf("simulate on the fetched trace: exit %d:\n%s%s", code, out, errOut)
	}
	// $OPTIMIZE_DATASET_MIRROR is the mirror when --mirror is not given.
	t.Setenv(datasets.MirrorEnv, mirror)
	if code, out, errOut = run(t, "workload", "fetch", "azure-conv-2023"); code != 0 || !strings.Contains(out, "from "+mirror+"/AzureLLMInferenceTrace_conv.csv") {
		t.Fatalf("fetch through $%s: exit %d:\n%s%s", datasets.MirrorEnv, code, out, errOut)
	}
}

// A dataset not fetched is still a trace's name: running it, inspecting
// it or asking for it is one line saying how to fetch it; workload list
// shows it as not fetched.
func TestWorkloadNotFetchedSaysHowToFetch(t *testing.T) {
	t.Setenv(datasets.CacheEnv, t.TempDir())
	want := `workload "mooncake-conversation": dataset not fetched yet: run 'optimize workload fetch mooncake-conversation' (3.0 MB from github.com/kvcache-ai/Mooncake, Apache-2.0)`
	for _, args := range [][]string{
		{"simulate", "--workload", "mooncake-conversation?rate=5"},
		{"workload", "inspect", "mooncake-conversation"},
		{"study", "create", "slo-cascade", "--workload", "mooncake-conversation?rate=5", "--storage", t.TempDir() + "/s.db"},
	} {
		code, _, errOut := run(t, args...)
		if code == 0 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, %q", strings.Join(args, " "), code, errOut)
		}
	}
	code, out, errOut := run(t, "workload", "list")
	if code != 0 || !regexpLine(out, `mooncake-conversation +trace +12031 +not fetched, 3\.0 MB`) {
		t.Fatalf("workload list: exit %d:\n%s%s", code, out, errOut)
	}
}

// Fetch errors are one line: a name not in the catalog, a mirror that is
// not an http(s) URL, a file the mirror does not have.
func TestWorkloadFetchErrors(t *testing.T) {
	t.Setenv(datasets.CacheEnv, t.TempDir())
	t.Setenv(datasets.MirrorEnv, "")
	mirror, _ := testkit.DatasetMirror(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"no-such"}, 2, `workload fetch: unknown dataset "no-such" (datasets: mooncake-conversation, `},
		{nil, 2, "workload fetch: name a dataset (mooncake-conversation, "},
		{[]string{"azure-conv-2023", "--mirror", "ftp://example"}, 2, `--mirror: "ftp://example" is not an http:// or https:// base URL`},
		{[]string{"azure-conv-2023", "--mirror", mirror + "/elsewhere"}, 1, "dataset azure-conv-2023: GET " + mirror + "/elsewhere/AzureLLMInferenceTrace_conv.csv: 404 Not Found"},
	} {
		code, _, errOut := run(t, append([]string{"workload", "fetch"}, c.args...)...)
		if code != c.code || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("fetch %v: exit %d, %q; want exit %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
	if entries, _ := os.ReadDir(os.Getenv(datasets.CacheEnv)); len(entries) > 1 {
		t.Errorf("failed fetches left %v in the cache", entries)
	}
}

// regexpLine reports whether a line of s begins with pattern.
func regexpLine(s, pattern string) bool {
	return regexp.MustCompile("(?m)^" + pattern).MatchString(s)
}
