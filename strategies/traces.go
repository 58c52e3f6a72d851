package strategies

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"optimize/simcore/cluster"
	"optimize/simcore/metrics"
	"optimize/simcore/workload"
	"optimize/templates"
)

// tracePrefix names a trace file as a workload: "trace:FILE".
const tracePrefix = "trace:"

// builtinTraceDir is where templates.Traces keeps the built-in traces,
// each NAME.<format extension>.gz.
const builtinTraceDir = "traces"

// Trace is a replayed trace: where its rows are read from and how they
// are replayed (the options a run does not set: seed, block size, context
// window and horizon come from the cluster configuration).
type Trace struct {
	Name     string // the built-in's name or "trace:FILE"
	Format   string // "" = detected from the content
	path     string // on disk, or
	embedded string // in templates.Traces
	Replay   workload.ReplayOptions
	// windows, when set (Workload.OnSeeds, OnWindows), is the window of
	// the trace each seed replays (TraceSplit); nil: every seed replays
	// all of Replay.Window.
	windows map[int64]workload.TraceWindow
	scales  *scaleCache
}

// BuiltinTraceNames lists the built-in traces, sorted.
func BuiltinTraceNames() []string {
	entries, err := fs.ReadDir(templates.Traces, builtinTraceDir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if base, ok := strings.CutSuffix(e.Name(), ".gz"); ok {
			names = append(names, strings.TrimSuffix(base, path.Ext(base)))
		}
	}
	sort.Strings(names)
	return names
}

// builtinTrace returns the embedded file of a built-in trace, "" if none.
func builtinTrace(name string) string {
	entries, _ := fs.ReadDir(templates.Traces, builtinTraceDir)
	for _, e := range entries {
		base, gz := strings.CutSuffix(e.Name(), ".gz")
		if gz && strings.TrimSuffix(base, path.Ext(base)) == name {
			return path.Join(builtinTraceDir, e.Name())
		}
	}
	return ""
}

// BuiltinTraceSize is the stored (compressed) size of a built-in trace in
// bytes, 0 if name is none.
func BuiltinTraceSize(name string) int64 {
	file := builtinTrace(name)
	if file == "" {
		return 0
	}
	info, err := fs.Stat(templates.Traces, file)
	if err != nil {
		return 0
	}
	return info.Size()
}

// resolveTrace reads a trace workload name: a built-in trace's name or
// trace:FILE, optionally followed by ?KEY=VALUE&… replay controls
// (workload.ReplayControls). ok is false when name names no trace.
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
		if t.embedded = builtinTrace(base); t.embedded == "" {
			return nil, false, nil
		}
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
	if t.path != "" {
		return workload.OpenTrace(t.path, t.Format)
	}
	f, err := templates.Traces.Open(t.embedded)
	if err != nil {
		return nil, err
	}
	r, err := workload.NewTraceReader(t.embedded, f, t.Format)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r.Closing(f), nil
}

// Source replays the trace for one run of cfg: cfg's seed draws the SLO
// mix (and, for a study's split trace, picks the window replayed), its
// block size cuts the prompts into KV blocks, rows longer than its
// context window are skipped and counted, and its horizon ends the
// replay.
func (t *Trace) Source(cfg cluster.Config) (*workload.ReplaySource, error) {
	opt := t.Replay
	opt.BlockSize, opt.Seed, opt.Horizon = int(cfg.BlockSize), cfg.Seed, cfg.Horizon
	window, err := cfg.ContextWindow()
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
