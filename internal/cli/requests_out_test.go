package cli

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// simulate --requests-out writes every completed request of every seed, a
// row each, and the rows add up to the summary: per seed, as many rows as
// completed requests, the mean of finish − arrival and of first token −
// arrival the summary's E2E and TTFT means, and the preemptions the
// summary counts (a KV cache small enough to preempt). Times run arrival
// ≤ scheduled ≤ first token ≤ finish. The JSONL file holds the same
// records; a file of another extension is refused before anything runs.
func TestRequestsOutAddsUpToTheSummary(t *testing.T) {
	dir := t.TempDir()
	args := []string{"simulate", "--num-requests", "400", "--seeds", "42,43", "--total-kv-blocks", "600", "--output", "json"}
	code, out, errs := run(t, append(args, "--requests-out", filepath.Join(dir, "r.csv"))...)
	if code != 0 {
		t.Fatal(errs)
	}
	var sum struct {
		Seeds   []int64 `json:"seeds"`
		PerSeed []struct {
			Completed   float64                `json:"completed"`
			Preemptions float64                `json:"preemptions"`
			TTFT        struct{ Mean float64 } `json:"ttft_ms"`
			E2E         struct{ Mean float64 } `json:"e2e_ms"`
		} `json:"per_seed"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "r.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows[0], ","); got != strings.Join(requestsOutColumns, ",") {
		t.Fatalf("header %s", got)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	num := func(r []string, c string) float64 {
		v, err := strconv.ParseFloat(r[col[c]], 64)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		return v
	}
	type acc struct{ n, ttft, e2e, preempt float64 }
	by := map[string]*acc{}
	for _, r := range rows[1:] {
		a := by[r[col["seed"]]]
		if a == nil {
			a = &acc{}
			by[r[col["seed"]]] = a
		}
		arr, sch, first, fin := num(r, "arrival_us"), num(r, "scheduled_us"), num(r, "first_token_us"), num(r, "finish_us")
		if !(arr <= sch && sch <= first && first <= fin) {
			t.Fatalf("request %s: arrival %v, scheduled %v, first token %v, finish %v", r[col["id"]], arr, sch, first, fin)
		}
		a.n++
		a.ttft += first - arr
		a.e2e += fin - arr
		a.preempt += num(r, "preemptions")
	}
	preempted := 0.0
	for i, seed := range sum.Seeds {
		a, s := by[strconv.FormatInt(seed, 10)], sum.PerSeed[i]
		if a == nil || a.n != s.Completed {
			t.Fatalf("seed %d: %v rows, %v completed", seed, a, s.Completed)
		}
		if math.Abs(a.ttft/a.n/1000-s.TTFT.Mean) > 1e-6 || math.Abs(a.e2e/a.n/1000-s.E2E.Mean) > 1e-6 {
			t.Errorf("seed %d: rows' TTFT mean %v ms, E2E %v ms; summary %v, %v", seed, a.ttft/a.n/1000, a.e2e/a.n/1000, s.TTFT.Mean, s.E2E.Mean)
		}
		if a.preempt != s.Preemptions {
			t.Errorf("seed %d: rows' preemptions %v, summary %v", seed, a.preempt, s.Preemptions)
		}
		preempted += a.preempt
	}
	if preempted == 0 {
		t.Error("no request was preempted: the test does not reach the preemption count")
	}

	code, _, errs = run(t, append(args, "--requests-out", filepath.Join(dir, "r.jsonl"))...)
	if code != 0 {
		t.Fatal(errs)
	}
	data, err := os.ReadFile(filepath.Join(dir, "r.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != len(rows)-1 {
		t.Fatalf("%d JSON lines for %d CSV rows", len(lines), len(rows)-1)
	}
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		for c, j := range col {
			want := rows[i+1][j]
			got := rec[c]
			if s, ok := got.(string); ok && s == want {
				continue
			}
			if f, ok := got.(float64); ok && strconv.FormatFloat(f, 'f', -1, 64) == want {
				continue
			}
			t.Fatalf("line %d: %s is %v in JSONL, %s in CSV", i+1, c, got, want)
		}
	}

	code, _, errs = run(t, "simulate", "--num-requests", "10", "--requests-out", filepath.Join(dir, "r.txt"))
	if want := `--requests-out: ` + filepath.Join(dir, "r.txt") + `: unknown format ".txt" (allowed: .csv, .jsonl)`; code == 0 || !strings.Contains(errs, want) {
		t.Errorf("exit %d: %s, want %s", code, errs, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.txt")); err == nil {
		t.Error("a refused --requests-out file was created")
	}
}
