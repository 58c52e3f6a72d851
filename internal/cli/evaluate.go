package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/spf13/cobra"

	"optimize/search"
	"optimize/simcore/errtext"
	"optimize/studies"
)

// maxEvaluateLine bounds one input line of evaluate (a parameter vector).
const maxEvaluateLine = 1 << 20

func newEvaluateCommand(s Streams, templatesDir *string) *cobra.Command {
	o := studies.CreateOptions{}
	var run studyRunFlags
	var input string
	var limits studies.Limits
	cmd := &cobra.Command{
		Use:   "evaluate TEMPLATE",
		Short: "Evaluate parameter vectors (JSON lines) as a study of TEMPLATE would: objectives, violations, feasibility, score",
		Long: `evaluate is a door for any optimizer. It runs the baseline once, exactly as
` + "`study create TEMPLATE`" + ` with the same flags would store it, then reads one JSON
object per input line (parameter name → value; null = not given) and writes one
JSON line per input line, in order: the trial's objectives, their ratios to the
baseline, each constraint's shortfall, the total, feasibility, the score (the
stored score, at ` + fmt.Sprint(search.StoredScore.Weight) + ` per unit of shortfall) and sampler_score (the model-based samplers' ranking,
at ` + fmt.Sprint(search.SamplerRank.Weight) + `), as a study of the template stores them for the same vector. The first
output line is a header: the baseline's objectives, the constraints, each
float's sampler grid and the two score rules.

A float may be any value in its range, on the sampler's grid or not: it runs
as given.

Every parameter active at the vector must be given and no inactive one may be.
A line refused (not JSON, an unknown or missing parameter, an inactive one, a
value out of range) or whose run fails is written as {"line":N,"error":"…"} and
evaluate goes on with the next line; it exits 2 at the end if any line was
refused. Blank lines are skipped (line numbers count them).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			o.Template = args[0]
			if err := run.resolve(cmd.Flags(), &o); err != nil {
				return err
			}
			if err := limits.Bad(); err != nil {
				return err
			}
			in, closeIn, err := evaluateInput(input, s)
			if err != nil {
				return err
			}
			defer closeIn()
			reg, err := loadRegistry(*templatesDir)
			if err != nil {
				return err
			}
			base, err := baseConfig()
			if err != nil {
				return failed(err)
			}
			// A long run of short simulations: collecting at 400 % growth
			// instead of 100 % takes a quarter off its time (200
			// joint-slo vectors, 3.66 s → 2.78 s; peak RSS 49 → 79 MiB).
			defer debug.SetGCPercent(debug.SetGCPercent(400))
			env := &studies.Env{Registry: reg, Base: base, Progress: io.Discard, Limits: limits}
			door, err := env.Door(o)
			if err != nil {
				return studyError(err)
			}
			return evaluateLines(door, in, s)
		},
	}
	cmd.Flags().StringVar(&input, "input", "-", "file of parameter vectors, one JSON object per line (- = standard input)")
	run.bind(cmd.Flags(), &o)
	bindLimits(cmd.Flags(), &limits, studies.LimitSeeds, studies.LimitRequests)
	return cmd
}

// evaluateInput opens --input: a file, or standard input for "-".
func evaluateInput(path string, s Streams) (io.Reader, func(), error) {
	if path == "-" {
		if s.In != nil {
			return s.In, func() {}, nil
		}
		return os.Stdin, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--input: %v", err)
	}
	return f, func() { f.Close() }, nil
}

// evaluateLines writes the door's header, then one line per input line,
// in input order: its result, or {"line":N,"error":…} (said on stderr
// too). Up to GOMAXPROCS lines run at once (a line's seeds run in
// parallel too, and its last seed alone leaves cores idle); each line's
// output is written as soon as it and every line before it are done, so
// an optimizer that writes one line and waits for its answer gets it.
func evaluateLines(door *studies.Door, in io.Reader, s Streams) error {
	enc := json.NewEncoder(s.Out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(door.Header()); err != nil {
		return failed(err)
	}
	type job struct {
		n    int
		text []byte
		out  chan any
	}
	jobs, order := make(chan job), make(chan job, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				res, err := door.Line(j.n, j.text)
				if err != nil {
					j.out <- studies.DoorError{Line: j.n, Error: err.Error()}
					continue
				}
				j.out <- res
			}
		}()
	}
	// The writer: results in input order.
	written := make(chan error, 1)
	refused := 0
	go func() {
		var werr error
		for j := range order {
			out := <-j.out
			if e, ok := out.(studies.DoorError); ok {
				refused++
				fmt.Fprintf(s.Err, "evaluate: %s\n", e.Error)
			}
			if werr == nil {
				werr = enc.Encode(out)
			}
		}
		written <- werr
	}()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxEvaluateLine)
	n := 0
	for sc.Scan() {
		n++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		j := job{n: n, text: bytes.Clone(text), out: make(chan any, 1)}
		order <- j // bounds the lines in flight
		jobs <- j
	}
	close(jobs)
	close(order)
	wg.Wait()
	if err := <-written; err != nil {
		return failed(err)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("--input: line %d: %v", n+1, err)
	}
	if refused > 0 {
		return errtext.Usage("%d of the input's lines refused (their output lines say why)", refused)
	}
	return nil
}
