package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
	"optimize/strategies/workloads"
)

// `make test` runs each fuzz target for a few seconds, `make bench` for
// longer; `go test` alone runs their seeds.

// checkRefusal fails when an error answer could leak or mislead: it must
// be one line, bounded, a client's mistake (4xx), and carry nothing of the
// secret beside the data directory.
func checkRefusal(t *testing.T, input string, err error) {
	t.Helper()
	msg := err.Error()
	if status := statusOf(err); status < 400 || status >= 500 {
		t.Fatalf("%q: status %d for %v", input, status, err)
	}
	if strings.Contains(msg, "\n") || strings.Contains(msg, "TOPSECRET") || len(msg) > maxErrorText {
		t.Fatalf("%q: the refusal spans lines, carries the secret or runs to %d bytes: %q", input, len(msg), msg)
	}
}

// checkInside fails unless the workload name opens no file or opens a
// regular file inside the data directory.
func checkInside(t *testing.T, input, data, name string) {
	t.Helper()
	ref := workloads.ParseRef(name)
	if !ref.ReadsFile() {
		return // opens nothing: a built-in, or a name no built-in has
	}
	rel, err := filepath.Rel(data, ref.File)
	fi, statErr := os.Stat(ref.File)
	if err != nil || !filepath.IsLocal(rel) || statErr != nil || !fi.Mode().IsRegular() {
		t.Fatalf("%q was let through as %q: a file outside %s", input, name, data)
	}
}

// Any workload name: the name taken apart puts itself back together, and
// the data directory either refuses it (one bounded line, no file
// content) or gives a file inside it.
func FuzzWorkloadName(f *testing.F) {
	data, secret := probeDirs(f)
	real, err := filepath.EvalSymlinks(data)
	if err != nil {
		f.Fatal(err)
	}
	d, err := newDataDir(data)
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range append(fileProbes(secret), "small.yaml", "trace:chat.jsonl?rate=2@moderate", "orthogonal-slo@kv-pressure", strings.Repeat("../", 200)+"etc/passwd") {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, name string) {
		ref := workloads.ParseRef(name)
		if back := ref.With(ref.File); back != name {
			t.Fatalf("%q taken apart and put back is %q", name, back)
		}
		got, err := d.workload(name)
		if err != nil {
			checkRefusal(t, name, err)
			return
		}
		checkInside(t, name, real, got)
	})
}

// Any create request body: checked without writing anything, answered
// with a client's error (bounded, one line, no file content) or options
// whose workload reads only the data directory.
func FuzzCreateStudyRequest(f *testing.F) {
	data, secret := probeDirs(f)
	real, err := filepath.EvalSymlinks(data)
	if err != nil {
		f.Fatal(err)
	}
	env := studykit.TempEnv(f, 1)
	srv, err := New(Config{Addr: "127.0.0.1:0", DataDir: data, Env: env})
	if err != nil {
		f.Fatal(err)
	}
	for _, body := range []string{
		`{"template": "slo-cascade", "trials": 1, "workload": "small.yaml"}`,
		`{"template": "slo-cascade", "trials": 1000000000000}`,
		`{"template": "slo-cascade", "workload": "trace:/etc/passwd"}`,
		`{"template": "slo-cascade", "workload": "trace:` + secret + `"}`,
		`{"template": "slo-cascade", "workload": "../secret.txt@moderate", "seeds": [1, 2]}`,
		`{"template": "slo-cascade", "name": "` + strings.Repeat("n", 5000) + `"}`,
		`{"template": "` + strings.Repeat("t", 5000) + `"}`,
		`{"template": "slo-cascade", "sampler": "tpe", "sampler_seed": 3, "from": "ghost"}`,
		`{"template": "slo-cascade", "` + strings.Repeat("x", 5000) + `": 1}`,
		`{"template": "slo-cascade"} {}`, `[]`, `{`, ``,
	} {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/api/studies", strings.NewReader(body))
		o, err := srv.createOptions(httptest.NewRecorder(), req)
		if err != nil {
			checkRefusal(t, body, err)
			return
		}
		checkInside(t, body, real, o.Workload)
	})
}
