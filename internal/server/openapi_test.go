package server

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"optimize/internal/testkit/studykit"
	"optimize/studies"
)

var updateOpenAPI = flag.Bool("update", false, "rewrite docs/openapi.json")

// openAPIFile is the copy of the document kept for tools.
const openAPIFile = "../../docs/openapi.json"

// openAPIOf is a server on env and its OpenAPI document.
func openAPIOf(t *testing.T, env *studies.Env) (*Server, []byte) {
	t.Helper()
	srv, err := New(Config{Addr: "127.0.0.1:0", Env: env})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := srv.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	return srv, doc
}

// docs/openapi.json is the document the server generates from its
// routes' Go types (go test ./internal/server -run TestOpenAPI -update
// rewrites it), and GET /api/openapi.json serves the same bytes.
func TestOpenAPIFileIsGenerated(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	_, doc := openAPIOf(t, env)
	if *updateOpenAPI {
		if err := os.WriteFile(openAPIFile, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kept, doc) {
		t.Errorf("%s is not the generated document: run go test ./internal/server -run TestOpenAPIFileIsGenerated -update", filepath.Base(openAPIFile))
	}
	ts := newServer(t, env, "127.0.0.1:0", "")
	if code, served := get(t, ts.URL+"/api/openapi.json"); code != http.StatusOK || !bytes.Equal(served, doc) {
		t.Errorf("GET /api/openapi.json: %d, %d bytes; want 200 and the document", code, len(served))
	}
}

// Every GET route's real answer on a study with validation and ablation
// evidence validates against the route's schema in the document, and an
// error answer against the error schema: the document says what the
// server sends, field for field (no field it does not declare).
func TestOpenAPIDescribesTheAnswers(t *testing.T) {
	env := studykit.TempEnv(t, 2)
	studykit.RunStudy(t, env, studykit.Study("slo-cascade", "s1", 8))
	ctx := context.Background()
	if _, err := env.Validate(ctx, "s1", studies.ValidateOptions{Trial: -1, Seeds: []int64{100, 101}, Regimes: []string{"rate-0.5x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Ablate(ctx, "s1", -1); err != nil {
		t.Fatal(err)
	}
	srv, doc := openAPIOf(t, env)
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("openapi.json", parsed); err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, env, "127.0.0.1:0", "")
	pointer := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1") }
	check := func(path, pattern, status string, body []byte) {
		t.Helper()
		sch, err := c.Compile("openapi.json#/paths/" + pointer(pattern) + "/get/responses/" + status + "/content/application~1json/schema")
		if err != nil {
			t.Fatalf("%s: %v", pattern, err)
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("GET %s does not match its schema: %v", path, err)
		}
	}
	checked := 0
	for _, r := range srv.apiRoutes() {
		pattern, ok := strings.CutPrefix(r.pattern, "GET ")
		if !ok {
			continue
		}
		path := strings.NewReplacer("{name}", "s1", "{n}", "1").Replace(pattern)
		if strings.HasPrefix(path, "/api/templates/") {
			path = "/api/templates/slo-cascade"
		}
		code, body := get(t, ts.URL+path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		check(path, pattern, "200", body)
		checked++
	}
	if checked < 10 {
		t.Fatalf("checked %d routes", checked)
	}
	code, body := get(t, ts.URL+"/api/studies/ghost")
	var e map[string]any
	if code != http.StatusNotFound || json.Unmarshal(body, &e) != nil {
		t.Fatalf("GET an unknown study: %d %s", code, body)
	}
	check("/api/studies/ghost", "/api/studies/{name}", "default", body)
}
