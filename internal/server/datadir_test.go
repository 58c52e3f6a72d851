package server

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"optimize/data"
	"optimize/internal/testkit/studykit"
	"optimize/simcore/errtext"
	"optimize/strategies/datasets"
)

// secretLine is the first line of a file outside the data directory: no
// answer may ever carry it.
const secretLine = "TOPSECRET:x:0:0:the first line a probe wants"

// probeDirs lays out a data directory with one good spec and one good
// trace, links out of it (to a file, to a directory, as a TraceV2
// header's CSV) and a secret beside it; it returns the data directory.
func probeDirs(t testing.TB) (dir, secret string) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "data")
	secret = filepath.Join(root, "secret.txt")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "nested"), 0o755))
	must(os.WriteFile(secret, []byte(secretLine+"\nsecond line\n"), 0o644))
	spec, err := fs.ReadFile(data.Workloads, "workloads/steady-chat.yaml")
	must(err)
	small := strings.Replace(string(spec), "num_requests: 4000", "num_requests: 200", 1)
	must(os.WriteFile(filepath.Join(dir, "small.yaml"), []byte(small), 0o644))
	must(os.WriteFile(filepath.Join(dir, "nested", "small.yaml"), []byte(small), 0o644))
	must(os.WriteFile(filepath.Join(dir, "chat.jsonl"), []byte(`{"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}`+"\n"), 0o644))
	must(os.Symlink(secret, filepath.Join(dir, "leak.yaml")))
	must(os.Symlink(secret, filepath.Join(dir, "leak.jsonl")))
	must(os.Symlink(root, filepath.Join(dir, "up")))
	must(os.Symlink("/etc", filepath.Join(dir, "etc")))
	must(os.WriteFile(filepath.Join(dir, "run.yaml"), []byte("trace_version: 2\n"), 0o644))
	must(os.Symlink(secret, filepath.Join(dir, "run.csv")))
	return dir, secret
}

// fileProbes are workload names that try to read a file the operator did
// not allow: absolute paths, traversal, links out, trace: prefixes, with
// regimes and replay controls around them, and a missing file (which must
// read exactly like a forbidden one).
func fileProbes(secret string) []string {
	return []string{
		"/etc/passwd", "trace:/etc/passwd", "trace:/etc/passwd?rate=5", "/etc/passwd.yaml", "/etc/passwd@moderate",
		"../secret.txt", "trace:../secret.txt", "../secret.txt@load-0.6", "trace:../secret.txt?window=0s-10s@moderate",
		"../../../../../../etc/passwd", "trace:../../../../../../etc/passwd", "nested/../../secret.txt",
		secret, "trace:" + secret, "leak.yaml", "trace:leak.jsonl", "up/secret.txt", "trace:up/secret.txt",
		"etc/passwd", "trace:etc/passwd", "trace:run.yaml", "missing.yaml", "trace:missing.jsonl", "nested/",
		"trace:", "trace:.", "./../secret.txt", "nested/../../data/../secret.txt",
	}
}

// Every probe through the create request's file-naming field gets the
// same one-line refusal, with the name quoted (bounded) and nothing of any
// file; a missing file reads exactly like a forbidden one. A file under
// --data-dir works, stored by its real path.
func TestRequestsOpenOnlyTheDataDir(t *testing.T) {
	data, secret := probeDirs(t)
	env := studykit.TempEnv(t, 2)
	withDir := newServerConfig(t, Config{Addr: "127.0.0.1:0", DataDir: data, Env: env})
	without := newServerConfig(t, Config{Addr: "127.0.0.1:0", Env: env})
	passwd, _ := os.ReadFile("/etc/passwd")
	firstPasswd, _, _ := strings.Cut(string(passwd), "\n")
	for _, srv := range []struct {
		name, url string
	}{{"--data-dir", withDir.URL}, {"no --data-dir", without.URL}} {
		refusals := map[string][]string{}
		for _, probe := range fileProbes(secret) {
			body, _ := json.Marshal(map[string]any{"template": "slo-cascade", "trials": 1, "workload": probe})
			code, got := post(t, srv.url+"/api/studies", "", string(body))
			var e errorBody
			if err := json.Unmarshal(got, &e); err != nil || code != http.StatusBadRequest {
				t.Errorf("%s: workload %q: %d %s; want 400", srv.name, probe, code, got)
				continue
			}
			if strings.Contains(e.Error, "TOPSECRET") || strings.Contains(e.Error, "second line") ||
				(firstPasswd != "" && strings.Contains(e.Error, firstPasswd)) || strings.Contains(e.Error, "\n") {
				t.Errorf("%s: workload %q: the answer carries a file's contents or spans lines: %q", srv.name, probe, e.Error)
			}
			shape := strings.Replace(e.Error, errtext.Quote(probe), "NAME", 1)
			refusals[shape] = append(refusals[shape], probe)
		}
		if len(refusals) != 1 {
			t.Errorf("%s: the probes got %d different refusals, want one:", srv.name, len(refusals))
			for shape, probes := range refusals {
				t.Logf("  %q for %q", shape, probes)
			}
		}
		for shape := range refusals {
			if !strings.HasPrefix(shape, "workload: NAME: not a built-in workload or trace (") {
				t.Errorf("%s: the refusal %q does not start by naming the field and the name", srv.name, shape)
			}
		}
	}
	code, got := post(t, withDir.URL+"/api/studies", "", `{"template": "slo-cascade", "trials": 1, "name": "fromdir", "workload": "nested/small.yaml"}`)
	if code != http.StatusAccepted {
		t.Fatalf("a spec under --data-dir: %d %s", code, got)
	}
	row, err := env.Store.StudyByName("fromdir")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(data, "nested", "small.yaml"); row.Workload != want {
		t.Errorf("the study stores workload %q, want the file's real path %q", row.Workload, want)
	}
	waitComplete(t, env, "fromdir", 1)
	if code, got := post(t, without.URL+"/api/studies", "", `{"template": "slo-cascade", "trials": 1, "name": "x", "workload": "small.yaml"}`); code != http.StatusBadRequest {
		t.Errorf("a data-dir file on a server without --data-dir: %d %s, want 400", code, got)
	}
}

// dataDir.workload keeps built-in names as they are and gives a file's
// real path in place of its name, regime and replay controls kept.
func TestDataDirWorkloadNames(t *testing.T) {
	data, _ := probeDirs(t)
	d, err := newDataDir(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{"orthogonal-slo", "orthogonal-slo"},
		{"orthogonal-slo@moderate", "orthogonal-slo@moderate"},
		{datasets.Names()[0] + "?rate=5@load-0.6", datasets.Names()[0] + "?rate=5@load-0.6"},
		{"small.yaml@moderate", filepath.Join(data, "small.yaml") + "@moderate"},
		{"trace:chat.jsonl?rate=5&window=0s-1s@moderate", "trace:" + filepath.Join(data, "chat.jsonl") + "?rate=5&window=0s-1s@moderate"},
	} {
		if got, err := d.workload(c.in); err != nil || got != c.want {
			t.Errorf("workload(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := newDataDir(filepath.Join(data, "small.yaml")); err == nil || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("a file as --data-dir: %v", err)
	}
}
