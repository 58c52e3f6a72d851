package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"optimize/simcore/workload"
	"optimize/strategies/workloads"
)

// TraceWindows is how a study on a replayed trace cut it
// (workloads.TraceSplit): the windows its seeds replayed, from the first
// half, and the second half's, held out for `study validate`.
type TraceWindows struct {
	Span     string                 `json:"span"`     // the studied part, START-END since the trace's first row
	Midpoint string                 `json:"midpoint"` // where the held-out half starts
	Length   string                 `json:"window_length"`
	Seeds    []workloads.SeedWindow `json:"seeds"`
	// HeldOut are the second half's windows by number; HeldOutSpan the
	// part of the trace they cover.
	HeldOut     []int64 `json:"held_out"`
	HeldOutSpan string  `json:"held_out_span"`
}

// StudyTraceWindows is the cut of the study's trace; nil when the study
// does not replay a trace cut into windows.
func (r *Report) StudyTraceWindows() *TraceWindows { return TraceWindowsOf(r.Study.Workload, r.Seeds) }

// TraceWindowsOf is the cut of a study's trace, by the workload name it
// stores and its seeds; nil for a workload not cut into windows.
func TraceWindowsOf(workloadName string, seeds []int64) *TraceWindows {
	wl, err := workloads.Resolve(workloadName)
	if err != nil {
		return nil
	}
	split, ok := wl.Split()
	if !ok {
		return nil
	}
	held := split.HeldOut()
	return &TraceWindows{
		Span: split.Span.String(), Midpoint: duration(split.Midpoint()), Length: duration(split.Length),
		Seeds: split.StudySeeds(seeds), HeldOut: held,
		HeldOutSpan: workload.TraceWindow{Start: split.Window(held[0]).Start, End: split.Window(held[len(held)-1]).End}.String(),
	}
}

func duration(us int64) string { return (time.Duration(us) * time.Microsecond).String() }

// WriteText prints the cut: which window each seed replays, and which are
// held out.
func (t *TraceWindows) WriteText(w io.Writer) {
	parts := make([]string, len(t.Seeds))
	for i, s := range t.Seeds {
		parts[i] = fmt.Sprintf("seed %d → window %d (%s)", s.Seed, s.Window, s.Span)
	}
	fmt.Fprintf(w, "trace windows of %s (the studied part %s, cut at %s): %s\n", t.Length, t.Span, t.Midpoint, strings.Join(parts, ", "))
	fmt.Fprintf(w, "held out for study validate: windows %s (%s)", SeedList(t.HeldOut), t.HeldOutSpan)
}
