package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"optimize/simcore/cluster"
	"optimize/simcore/workload"
	"optimize/strategies/datasets"
	"optimize/strategies/workloads"
	"optimize/traffic"
)

func newWorkloadCommand(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "List, inspect and fit workloads (built-in specs, trace datasets, trace files); fetch the datasets",
		Args:  cobra.NoArgs,
		RunE:  showHelp,
	}
	cmd.AddCommand(newWorkloadList(s), newWorkloadInspect(s), newWorkloadFit(s), newWorkloadFetch(s))
	return cmd
}

// workloadSource is an opened workload: the requests to measure and what
// they are.
type workloadSource struct {
	name, kind string
	stream     traffic.Stream
	close      func() error
}

// workloadOpen flags choose how NAME|FILE is read.
type workloadOpen struct {
	format    string
	seed      int64
	blockSize int
	window    time.Duration
}

func (o *workloadOpen) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.format, "trace-format", "", "force the trace format: "+strings.Join(workload.TraceFormats, ", ")+" (default: from the content)")
	cmd.Flags().DurationVar(&o.window, "window", time.Minute, "window of the rate and reuse over time (and of the peak rate)")
}

func (o *workloadOpen) check() error {
	if o.window < time.Millisecond {
		return fmt.Errorf("--window: must be ≥ 1ms, got %v", o.window)
	}
	return nil
}

// open reads NAME|FILE: a file (a trace, or a .yaml spec that is not a
// TraceV2 header), a trace dataset (fetched into the cache) or a built-in
// workload (its requests generated at seed, the spec's own when seed is
// 0).
func (o *workloadOpen) open(arg string) (*workloadSource, error) {
	if _, err := os.Stat(arg); err == nil {
		if ext := strings.ToLower(filepath.Ext(arg)); (ext == ".yaml" || ext == ".yml") && !isTraceHeader(arg) {
			spec, err := workload.LoadSpecFile(arg)
			if err != nil {
				return nil, err
			}
			return o.generate(arg, spec)
		}
		tr, err := workload.OpenTrace(arg, o.format)
		if err != nil {
			return nil, err
		}
		return &workloadSource{name: filepath.Base(arg), kind: tr.Format() + " trace", stream: traffic.FromTrace(tr), close: tr.Close}, nil
	}
	if contains(datasets.Names(), arg) {
		w, err := workloads.Resolve(arg) // not fetched yet: says how to fetch it
		if err != nil {
			return nil, err
		}
		if o.format != "" {
			w.Trace.Format = o.format
		}
		tr, err := w.Trace.Open()
		if err != nil {
			return nil, failed(err)
		}
		return &workloadSource{name: arg, kind: tr.Format() + " trace dataset", stream: traffic.FromTrace(tr), close: tr.Close}, nil
	}
	lib := workloads.Builtins()
	if !contains(lib.Names(), arg) {
		return nil, fmt.Errorf("workload %q: no such file, trace dataset or built-in workload (built-in: %s)", arg, strings.Join(builtinNames(), ", "))
	}
	spec, err := lib.Spec(arg)
	if err != nil {
		return nil, failed(err)
	}
	return o.generate(arg, spec)
}

func (o *workloadOpen) generate(name string, spec *workload.Spec) (*workloadSource, error) {
	seed := spec.Seed
	if o.seed != 0 {
		seed = o.seed
	}
	g, err := workload.NewGenerator(spec, workload.Options{Seed: seed, BlockSize: o.blockSize})
	if err != nil {
		return nil, err
	}
	return &workloadSource{name: name, kind: fmt.Sprintf("generated from its spec, seed %d, %d-token blocks", seed, o.blockSize),
		stream: traffic.FromGenerator(g, o.blockSize), close: func() error { return nil }}, nil
}

// measure opens and reads the workload to the end.
func (o *workloadOpen) measure(arg string) (*workloadSource, *traffic.Stats, error) {
	src, err := o.open(arg)
	if err != nil {
		return nil, nil, err
	}
	defer src.close()
	st, err := traffic.Measure(src.stream, o.window.Microseconds())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", arg, err)
	}
	return src, st, nil
}

// isTraceHeader reports whether a YAML file is a TraceV2 header (it names
// trace_version) rather than a workload spec.
func isTraceHeader(file string) bool {
	data, err := os.ReadFile(file)
	return err == nil && strings.Contains(string(data), "trace_version:")
}

// builtinNames lists the trace datasets and the built-in workloads.
func builtinNames() []string {
	return append(datasets.Names(), workloads.Builtins().Names()...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// workloadListEntry is one row of workload list.
type workloadListEntry struct {
	Name        string  `json:"name"`
	Kind        string  `json:"kind"` // "spec" or "trace"
	Rate        float64 `json:"rate,omitempty"`
	Requests    int64   `json:"requests,omitempty"`
	SpanS       float64 `json:"span_s,omitempty"`
	SizeBytes   int64   `json:"size_bytes,omitempty"`
	Fetched     *bool   `json:"fetched,omitempty"` // a trace dataset: in the cache
	Description string  `json:"description"`
}

func newWorkloadList(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the built-in workloads (specs) and the trace datasets, fetched or not",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			entries, err := workloadEntries()
			if err != nil {
				return failed(err)
			}
			if output == "json" {
				return writeIndented(s.Out, entries)
			}
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tKIND\tREQUESTS\tRATE/SPAN\tDESCRIPTION")
			for _, e := range entries {
				rate := fmt.Sprintf("%g req/s", e.Rate)
				switch {
				case e.Fetched != nil && *e.Fetched:
					rate = fmt.Sprintf("%.0f s, %.1f MB", e.SpanS, float64(e.SizeBytes)/1e6)
				case e.Fetched != nil:
					rate = fmt.Sprintf("not fetched, %.1f MB", float64(e.SizeBytes)/1e6)
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", e.Name, e.Kind, e.Requests, rate, e.Description)
			}
			return failed(tw.Flush())
		},
	}
	cmd.Flags().StringVar(&output, "output", "text", "text or json")
	return cmd
}

// workloadEntries lists the built-in specs, then the trace datasets:
// those fetched read once for their requests and span, the others with
// the catalog's row count.
func workloadEntries() ([]workloadListEntry, error) {
	lib := workloads.Builtins()
	var out []workloadListEntry
	for _, name := range lib.Names() {
		spec, err := lib.Spec(name)
		if err != nil {
			return nil, err
		}
		data, _ := fs.ReadFile(lib.FS, path.Join(lib.Dir, name+".yaml"))
		out = append(out, workloadListEntry{Name: name, Kind: "spec", Rate: spec.AggregateRate, Requests: spec.NumRequests, Description: headComment(data)})
	}
	for _, d := range datasets.All() {
		fetched := datasets.Fetched(d)
		e := workloadListEntry{Name: d.Name, Kind: "trace", Requests: int64(d.Rows), SizeBytes: d.Size, Fetched: &fetched,
			Description: fmt.Sprintf("%s trace dataset from %s, %s; not fetched: optimize workload fetch %s", d.Format, d.Source(), d.Licence, d.Name)}
		if fetched {
			o := &workloadOpen{window: time.Minute}
			_, st, err := o.measure(d.Name)
			if err != nil {
				return nil, err
			}
			e.Requests, e.SpanS = int64(st.Requests), st.SpanS
			e.Description = fmt.Sprintf("%s trace dataset from %s, %s; fetched (citation: optimize workload fetch --list)", d.Format, d.Source(), d.Licence)
		}
		out = append(out, e)
	}
	return out, nil
}

// headComment is the first sentence of a YAML file's leading comment.
func headComment(data []byte) string {
	var words []string
	for _, line := range strings.Split(string(data), "\n") {
		text, ok := strings.CutPrefix(strings.TrimSpace(line), "#")
		if !ok {
			break
		}
		words = append(words, strings.TrimSpace(text))
	}
	return firstSentence(strings.Join(words, " "))
}

// blockSizeDefault is the simulator's KV block size, the blocks of a
// generated workload's prompts.
func blockSizeDefault() int { return int(cluster.Defaults().BlockSize) }
