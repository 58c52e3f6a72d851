package workloads

import (
	"fmt"
	"strings"

	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
	"optimize/simcore/workload"
	"optimize/strategies/datasets"
)

// tracePrefix names a trace file as a workload: "trace:FILE".
const tracePrefix = "trace:"

// Trace is a replayed trace: where its rows are read from and how they
// are replayed (the options a run does not set: seed, block size, context
// window and horizon come from the cluster configuration).
type Trace struct {
	Name   string // a dataset's name or "trace:FILE"
	Format string // "" = detected from the content
	path   string // on disk: the file named, or the dataset in the cache
	Replay workload.ReplayOptions
	// windows, when set (Workload.OnSeeds, OnWindows), is the window of
	// the trace each seed replays (TraceSplit); nil: every seed replays
	// all of Replay.Window.
	windows map[int64]workload.TraceWindow
	scales  *scaleCache
}

// resolveTrace reads a trace workload name: a dataset's name (package
// datasets: fetched into the cache by `optimize workload fetch`) or
// trace:FILE, optionally followed by ?KEY=VALUE&… replay controls
// (workload.ReplayControls). ok is false when name names no trace; a
// dataset not fetched yet is a trace (ok) and an error saying how to
// fetch it.
func resolveTrace(name string) (t *Trace, ok bool, err error) {
	base, controls, _ := strings.Cut(name, "?")
	t = &Trace{Name: name}
	switch file, isFile := strings.CutPrefix(base, tracePrefix); {
	case isFile:
		if file == "" {
			return nil, true, fmt.Errorf("workload %q: name the trace file after %s", name, tracePrefix)
		}
		t.path = file
	default:
		d, isDataset := datasets.Lookup(base)
		if !isDataset {
			return nil, false, nil
		}
		file, err := datasets.Locate(d)
		if err != nil {
			return nil, true, fmt.Errorf("workload %q: %v", base, err)
		}
		t.path, t.Format = file, d.Format
	}
	if err := t.Replay.ParseReplayControls(controls); err != nil {
		return nil, true, fmt.Errorf("workload %q: %v", name, err)
	}
	return t, true, nil
}

// OpenTrace reads a trace file (format "" = detected) as a workload:
// its replay options are the caller's to set.
func OpenTrace(file, format string) *Trace {
	return &Trace{Name: file, Format: format, path: file}
}

// Open starts reading the trace's rows.
func (t *Trace) Open() (*workload.TraceReader, error) {
	return workload.OpenTrace(t.path, t.Format)
}

// Source replays the trace for one run of cfg: cfg's seed draws the SLO
// mix (and, for a study's split trace, picks the window replayed), its
// block size cuts the prompts into KV blocks, rows longer than its
// context window are skipped and counted, and its horizon ends the
// replay.
func (t *Trace) Source(cfg cluster.Config) (*workload.ReplaySource, error) {
	opt := t.Replay
	opt.BlockSize, opt.Seed, opt.Horizon = int(cfg.BlockSize), cfg.Seed, cfg.Horizon
	world, err := cfg.Resolve()
	if err != nil {
		return nil, err
	}
	window, err := cfg.ContextWindow(world)
	if err != nil {
		return nil, err
	}
	opt.ContextWindow = window
	if t.windows != nil {
		if err := t.windowOptions(&opt); err != nil {
			return nil, err
		}
	}
	return workload.NewReplay(t.Open, opt)
}

// AddReplayCounts records in s the rows a replay skipped as unservable.
func AddReplayCounts(s *metrics.Summary, c workload.ReplayCounts) {
	for _, f := range []struct {
		dst **float64
		n   int
	}{{&s.TraceZeroOutput, c.ZeroOutput}, {&s.TraceZeroInput, c.ZeroInput}, {&s.TraceOverContext, c.OverContext}} {
		v := float64(f.n)
		*f.dst = &v
	}
}

// CheckDatasetName checks a workload name built on a dataset (NAME,
// NAME?CONTROLS, NAME…@REGIME) without reading the dataset, which need not
// be fetched yet (a template naming one loads before it is): its replay
// controls and regimes must read. isDataset is false for any other name.
func CheckDatasetName(name string) (isDataset bool, err error) {
	base, regimes, _ := strings.Cut(name, "@")
	traceBase, controls, _ := strings.Cut(base, "?")
	if _, ok := datasets.Lookup(traceBase); !ok {
		return false, nil
	}
	var o workload.ReplayOptions
	if err := o.ParseReplayControls(controls); err != nil {
		return true, fmt.Errorf("workload %q: %v", name, err)
	}
	for _, r := range strings.Split(regimes, "@") {
		if r == "" {
			continue
		}
		if _, err := LookupRegime(r); err != nil {
			return true, fmt.Errorf("workload %q: %v", name, err)
		}
	}
	return true, nil
}
