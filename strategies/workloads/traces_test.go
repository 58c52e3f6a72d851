package workloads_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"optimize/internal/testkit"
	"optimize/simcore/cluster"
	"optimize/strategies/datasets"
	"optimize/strategies/settings"
	"optimize/strategies/workloads"
)

// mooncakeRow is a row of the Mooncake conversation trace, read here with
// encoding/json alone: the reuse below is computed without the replay.
type mooncakeRow struct {
	Timestamp float64  `json:"timestamp"`
	Input     int      `json:"input_length"`
	Output    int      `json:"output_length"`
	HashIDs   []uint64 `json:"hash_ids"`
}

// mooncakeRows reads the dataset mooncake-conversation from the test's
// dataset cache (testkit.Datasets, which it sets up for t).
func mooncakeRows(t *testing.T) []mooncakeRow {
	t.Helper()
	testkit.Datasets(t)
	d, _ := datasets.Lookup("mooncake-conversation")
	file, err := datasets.Locate(d)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []mooncakeRow
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		var r mooncakeRow
		if err := json.Unmarshal(s.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// traceReuse is the trace's prefix reuse computed from its hash ids: a
// request reuses the tokens of its leading 512-token blocks whose id path
// an earlier request had, each up to the tokens that request had in it
// (a last block is partial); the share is of all tokens, input and output,
// as the simulator's hit rate counts every block it stores.
func traceReuse(rows []mooncakeRow) (reused, tokens int64) {
	type node struct {
		parent int
		id     uint64
	}
	nodes := map[node]int{}
	extent := []int{} // per node: most tokens a request had in its block
	for _, r := range rows {
		parent, hit := -1, true
		for k, id := range r.HashIDs {
			inBlock := min(512, r.Input-512*k)
			n, seen := nodes[node{parent, id}]
			if !seen {
				n = len(extent)
				nodes[node{parent, id}] = n
				extent = append(extent, 0)
			}
			if hit = hit && seen; hit {
				reused += int64(min(inBlock, extent[n]))
			}
			extent[n] = max(extent[n], inBlock)
			parent = n
		}
		tokens += int64(r.Input + r.Output)
	}
	return reused, tokens
}

// On one instance with room for every block, with the requests so far
// apart that none overlaps another (each can only hit blocks computed
// before it arrives), the simulated prefix-cache hit rate of the Mooncake
// conversation trace is the reuse its hash ids give, to 0.1 percentage point.
func TestMooncakeHitRateIsTraceReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the whole Mooncake trace")
	}
	rows := mooncakeRows(t)
	if len(rows) != 12031 {
		t.Fatalf("%d rows, want 12,031", len(rows))
	}
	reused, tokens := traceReuse(rows)
	want := float64(reused) / float64(tokens)
	// The trace, its rows 1,000 s apart (many share a time stamp).
	path := filepath.Join(t.TempDir(), "spaced.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i, r := range rows {
		r.Timestamp = float64(i) * 1e6
		b, _ := json.Marshal(r)
		fmt.Fprintf(w, "%s\n", b)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, blockSize := range []int64{16, 32} {
		cfg, err := settings.Standard()
		if err != nil {
			t.Fatal(err)
		}
		cfg.NumInstances, cfg.BlockSize = 1, blockSize
		blocks := int64(0)
		for _, r := range rows {
			blocks += int64(r.Input+r.Output)/blockSize + 1
		}
		cfg.TotalKVBlocks = blocks
		src, err := workloads.OpenTrace(path, "mooncake").Source(cfg)
		if err != nil {
			t.Fatal(err)
		}
		eng, err := cluster.New(cfg, src)
		if err != nil {
			t.Fatal(err)
		}
		sum := eng.Run()
		if err := src.Err(); err != nil {
			t.Fatal(err)
		}
		t.Logf("block size %d: simulated hit rate %.4f%%, trace reuse %.4f%% (%d of %d tokens)", blockSize, 100*sum.CacheHitRate, 100*want, reused, tokens)
		if sum.Completed != 12031 || sum.Preemptions != 0 {
			t.Fatalf("completed %v, preemptions %v: want all 12,031 without preemption", sum.Completed, sum.Preemptions)
		}
		if d := math.Abs(sum.CacheHitRate - want); d > 0.001 {
			t.Errorf("block size %d: hit rate %.4f, trace reuse %.4f: off by %.3f pp", blockSize, sum.CacheHitRate, want, 100*d)
		}
	}
}
