package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"optimize/internal/server"
	"optimize/internal/testkit/studykit"
)

// The same mistake made through `study create` and through POST
// /api/studies gets the same words, named by the flag in one and by the
// JSON field in the other.
func TestServeErrorsAreTheCLIsWordsByField(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	srv, err := server.New(server.Config{Addr: "127.0.0.1:0", Env: env})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	dsn := filepath.Join(t.TempDir(), "s.db")
	for _, c := range []struct {
		flags []string
		body  string
		flag  string
		field string
	}{
		{[]string{"--trials", "0"}, `"trials": 0`, "--trials", "trials"},
		{[]string{"--sampler", "cmaes"}, `"sampler": "cmaes"`, "--sampler", "sampler"},
		{[]string{"--name", "a b"}, `"name": "a b"`, "--name", "name"},
		{[]string{"--workload", "nope"}, `"workload": "nope"`, "--workload", "workload"},
		{[]string{"--from", "ghost"}, `"from": "ghost"`, "--from", "from"},
	} {
		code, _, stderr := run(t, append([]string{"study", "create", "slo-cascade", "--storage", dsn}, c.flags...)...)
		cli := strings.TrimSuffix(strings.TrimPrefix(stderr, "optimize: "), "\n")
		res, err := http.Post(ts.URL+"/api/studies", "application/json", strings.NewReader(`{"template": "slo-cascade", `+c.body+`}`))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var api struct{ Error string }
		if err := json.Unmarshal(raw, &api); err != nil {
			t.Fatal(err)
		}
		if code != 2 || !strings.HasPrefix(cli, c.flag+": ") || res.StatusCode != http.StatusBadRequest || api.Error != strings.Replace(cli, c.flag, c.field, 1) {
			t.Errorf("%v: CLI (exit %d) %q; API (%d) %q; want the CLI's words with %s for %s", c.flags, code, cli, res.StatusCode, api.Error, c.field, c.flag)
		}
	}
}

// serve's own flags are checked before it listens.
func TestServeFlagErrors(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "s.db")
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"serve", "--public-read", "--storage", dsn}, "--public-read: only with --token"},
		{[]string{"serve", "--addr", "0.0.0.0:0", "--storage", dsn}, "give --token"},
		{[]string{"serve", "--data-dir", filepath.Join(dsn, "nowhere"), "--storage", dsn}, "--data-dir"},
		{[]string{"serve", "--new-session-key", "--storage", dsn}, "--new-session-key: needs --session-key-file"},
		{[]string{"serve", "--max-running-studies", "0", "--storage", dsn}, "--max-running-studies: must be ≥ 1, got 0"},
	} {
		t.Setenv(TokenVar, "")
		code, out, errs := run(t, c.args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.say) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line saying %q", c.args, code, out, errs, c.say)
		}
	}
}

// A token under 16 characters is accepted with a warning.
func TestShortTokenWarning(t *testing.T) {
	if w := tokenWarning("x"); !strings.Contains(w, "1 characters") || !strings.Contains(w, "under 16") {
		t.Errorf("a one-character token: %q", w)
	}
	if w := tokenWarning("sixteen-chars-ok"); w != "" {
		t.Errorf("a 16-character token: %q", w)
	}
}

// --session-key-file makes the key once (mode 0600), keeps it across
// starts, and --new-session-key replaces it; a file that holds no key is
// refused, not overwritten.
func TestSessionKeyFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "session.key")
	first, err := sessionKey(file, false)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	again, err := sessionKey(file, false)
	if err != nil || !bytes.Equal(first, again) || len(first) != server.SessionKeyBytes {
		t.Errorf("a second start read %x (%v), want the first key %x", again, err, first)
	}
	fresh, err := sessionKey(file, true)
	if err != nil || bytes.Equal(fresh, first) {
		t.Errorf("--new-session-key gave %x (%v), want a key other than %x", fresh, err, first)
	}
	if kept, _ := sessionKey(file, false); !bytes.Equal(kept, fresh) {
		t.Errorf("after rotation the file holds %x, want %x", kept, fresh)
	}
	os.WriteFile(file, []byte("not a key\n"), 0o600)
	if _, err := sessionKey(file, false); err == nil || !strings.Contains(err.Error(), "--session-key-file") {
		t.Errorf("a file holding no key: %v", err)
	}
	if data, _ := os.ReadFile(file); string(data) != "not a key\n" {
		t.Errorf("the refused file was rewritten: %q", data)
	}
}
