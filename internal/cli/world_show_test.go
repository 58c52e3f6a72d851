package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"optimize/internal/testkit"
	"optimize/simcore/cluster"
)

// worldDoc is the world as the JSON documents give it: its fields and its
// line.
type worldDoc struct {
	cluster.World
	Line string `json:"line"`
}

// template show states a template's world and what of it the template
// tunes: the seeds' world for a shipped template, which tunes none;
// Qwen3-14B on H100 with trained-physics for the user template choosing
// the GPU and the instances, which lists both.
func TestTemplateShowStatesTheWorld(t *testing.T) {
	code, out, errs := run(t, "template", "show", "slo-cascade")
	if code != 0 || !strings.Contains(out, "world: meta-llama/llama-3.1-8b-instruct on H100, TP2, blackbox latency model · 8 instances · 132139 KV blocks per instance\n") ||
		!strings.Contains(out, "tunes the world: no") {
		t.Fatalf("slo-cascade: exit %d (%s):\n%s", code, errs, out)
	}
	dir := testkit.WorldTemplateDir(t)
	code, out, errs = run(t, "template", "show", testkit.WorldTemplateName, "--templates-dir", dir)
	if code != 0 || !regexp.MustCompile(`world: qwen/qwen3-14b on H100, TP2, trained-physics latency model · 4 instances · \d{5,} KV blocks per instance\n`).MatchString(out) ||
		!strings.Contains(out, "tunes the world: gpu, num_instances") {
		t.Fatalf("world template: exit %d (%s):\n%s", code, errs, out)
	}
	code, out, errs = run(t, "template", "show", testkit.WorldTemplateName, "--templates-dir", dir, "--output", "json")
	var doc struct {
		World      worldDoc `json:"world"`
		TunesWorld []string `json:"tunes_world"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil {
		t.Fatalf("json: exit %d, %v (%s)", code, err, errs)
	}
	if doc.World.Model != "qwen/qwen3-14b" || doc.World.GPU != "H100" || doc.World.TP != 2 || doc.World.LatencyModel != "trained-physics" ||
		doc.World.Instances != 4 || doc.World.KVBlocks < 10000 || strings.Join(doc.TunesWorld, ",") != "gpu,num_instances" {
		t.Fatalf("json world %+v, tunes %v", doc.World, doc.TunesWorld)
	}
}

// A study of a template in another world records it and every report
// says it: show's world line and JSON, the best and each Pareto trial's
// world (the template tunes the GPU and instances: each trial's is its
// own, from its parameters), one trial's, the list's column, the HTML
// report. A study stored before worlds were recorded reads as the seeds'.
func TestStudyStatesItsWorld(t *testing.T) {
	dir := testkit.WorldTemplateDir(t)
	dsn := filepath.Join(t.TempDir(), "w.db")
	code, out, errs := run(t, "study", "create", testkit.WorldTemplateName, "--templates-dir", dir, "--trials", "5", "--name", "w",
		"--seeds", "42", "--storage", dsn, "--workers", "2")
	if code != 0 {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "\nworld qwen/qwen3-14b on H100, TP2, trained-physics latency model · 4 instances · ") ||
		!strings.Contains(out, "the template tunes gpu, num_instances") || !regexp.MustCompile(`trial \d+'s world: qwen/qwen3-14b on (H100|A100-80|L40S), TP2`).MatchString(out) {
		t.Fatalf("show after create:\n%s", out)
	}
	code, out, errs = run(t, "study", "show", "w", "--templates-dir", dir, "--storage", dsn, "--output", "json")
	var doc struct {
		World        worldDoc `json:"world"`
		WorldAssumed bool     `json:"world_assumed"`
		TunesWorld   []string `json:"tunes_world"`
		Best         struct {
			Trial  int            `json:"trial"`
			Params map[string]any `json:"params"`
			World  *worldDoc      `json:"world"`
		} `json:"best"`
		Pareto []struct {
			Params map[string]any `json:"params"`
			World  *worldDoc      `json:"world"`
		} `json:"pareto"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil {
		t.Fatalf("show json: exit %d, %v (%s)", code, err, errs)
	}
	if doc.World.Model != "qwen/qwen3-14b" || doc.World.GPU != "H100" || doc.WorldAssumed || len(doc.TunesWorld) != 2 {
		t.Fatalf("study world %+v (assumed %v, tunes %v)", doc.World, doc.WorldAssumed, doc.TunesWorld)
	}
	check := func(what string, params map[string]any, w *worldDoc) {
		if w == nil || w.GPU != params["gpu"] || float64(w.Instances) != params["instances"] || w.Model != "qwen/qwen3-14b" || w.KVBlocks < 1000 {
			t.Fatalf("%s: world %+v for parameters %v", what, w, params)
		}
	}
	check("best", doc.Best.Params, doc.Best.World)
	if len(doc.Pareto) == 0 {
		t.Fatal("no Pareto trial")
	}
	for _, p := range doc.Pareto {
		check("pareto", p.Params, p.World)
	}
	code, out, _ = run(t, "study", "show", "w", "--templates-dir", dir, "--storage", dsn, "--trial", "0")
	if code != 0 || !regexp.MustCompile(`\nworld qwen/qwen3-14b on (H100|A100-80|L40S), TP2, trained-physics latency model · \d instances · \d+ KV blocks per instance\n`).MatchString(out) {
		t.Fatalf("show --trial 0: exit %d:\n%s", code, out)
	}
	code, out, _ = run(t, "study", "list", "--templates-dir", dir, "--storage", dsn)
	// The template tunes the world: the list shows the best trial's.
	if code != 0 || !strings.Contains(out, "WORLD") || !regexp.MustCompile(`qwen3-14b (H100|A100-80|L40S)×\d+ TP2 trained-physics \(best\)`).MatchString(out) {
		t.Fatalf("list: exit %d:\n%s", code, out)
	}
	html := filepath.Join(t.TempDir(), "w.html")
	if code, _, errs := run(t, "study", "report", "w", "--templates-dir", dir, "--storage", dsn, "--output", html); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	if !strings.Contains(page, "qwen/qwen3-14b on H100, TP2, trained-physics latency model · 4 instances") || !strings.Contains(page, `id="pareto-worlds"`) ||
		!strings.Contains(page, `id="best-world"`) {
		t.Fatal("the HTML report does not state the study's world, the best trial's and the Pareto trials'")
	}

	old := testkit.ReleaseSQLite(t)
	code, out, errs = run(t, "study", "show", "old", "--storage", old)
	if code != 0 || !strings.Contains(out, "\nworld meta-llama/llama-3.1-8b-instruct on H100, TP2, blackbox latency model · 8 instances · 132139 KV blocks per instance (stored before studies recorded their world: the seeds' world") {
		t.Fatalf("old study: exit %d (%s):\n%s", code, errs, out)
	}
}
