package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"optimize/storage"
	"optimize/studies"
	"optimize/studies/report"
	"optimize/studies/report/plot"
)

func newStudyPlot(s Streams, f *studyFlags) *cobra.Command {
	var kind, x, y, out string
	cmd := &cobra.Command{
		Use:   "plot NAME",
		Short: "Draw a study as SVG or PNG: history, hypervolume, pareto, parallel or importance",
		Long: `Draw one picture of a study, as SVG or PNG by the extension of -o:
  history      every trial's primary objective (a cross: the trial violates a
               constraint), the best trial so far, the baseline
  hypervolume  the hypervolume of the Pareto front of the trials so far
  pareto       two objectives (--x, --y; default the primary and the next),
               the Pareto trials highlighted, the baseline marked
  parallel     the parameters in parallel coordinates, coloured by the
               primary objective
  importance   each parameter's share of the score's rank variance`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(plot.Kinds, kind) {
				return fmt.Errorf("--kind: unknown value %q (allowed: %s)", kind, strings.Join(plot.Kinds, ", "))
			}
			if kind != "pareto" && (x != "" || y != "") {
				return fmt.Errorf("--x and --y: only for --kind pareto")
			}
			if out == "" {
				return fmt.Errorf("-o: give the file to write (allowed extensions: .svg, .png)")
			}
			format, err := plot.FormatOf(out)
			if err != nil {
				return err
			}
			return f.withStudy(s, args[0], func(env *studies.Env, row *storage.Study) error {
				r, err := report.Load(env.Store, env.Registry, row.Name)
				if err != nil {
					return studyError(err)
				}
				if err := plot.CheckObjectives(r, x, y); err != nil {
					return err
				}
				p, err := plot.Make(r, kind, x, y)
				if err != nil {
					return failed(err)
				}
				var buf bytes.Buffer
				if err := plot.Write(&buf, p, format); err != nil {
					return failed(err)
				}
				return writeFile(s, out, buf.Bytes())
			})
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "history", strings.Join(plot.Kinds, ", "))
	cmd.Flags().StringVar(&x, "x", "", "pareto: the objective across (default: the primary)")
	cmd.Flags().StringVar(&y, "y", "", "pareto: the objective up (default: the objective after the primary)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "the file to write: FILE.svg or FILE.png")
	return cmd
}

func newStudyReport(s Streams, f *studyFlags) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report NAME",
		Short: "One self-contained HTML page: the study, its template, baseline against best, the pictures, the evidence",
		Long: `Write one HTML file that needs nothing else: the study and its template
(mechanism and parameter space), the baseline against the best trial per
objective and SLO class, the five pictures of study plot as inline SVG,
and the stored validation and ablation when there are any. It has no
script and refers to nothing outside itself.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStudy(s, args[0], func(env *studies.Env, row *storage.Study) error {
				r, err := report.Load(env.Store, env.Registry, row.Name)
				if err != nil {
					return studyError(err)
				}
				if err := env.LoadEvidence(r); err != nil {
					return studyError(err)
				}
				var buf bytes.Buffer
				if err := plot.HTML(&buf, r); err != nil {
					return failed(err)
				}
				return writeFile(s, out, buf.Bytes())
			})
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the file to write (default stdout)")
	return cmd
}

// writeFile writes data to path, or to the command's output for "" and
// "-"; a file is written whole or not at all.
func writeFile(s Streams, path string, data []byte) error {
	if path == "" || path == "-" {
		_, err := io.Copy(s.Out, bytes.NewReader(data))
		return failed(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return failed(err)
	}
	return failed(os.Rename(tmp, path))
}

// writeFiles writes a multi-file export into dir, made if absent; each
// file is written whole (a temporary file renamed) once all are built.
func writeFiles(s Streams, dir string, files []report.ExportFile) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return failed(err)
	}
	for _, f := range files {
		if err := writeFile(s, filepath.Join(dir, f.Name), f.Data); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.Err, "wrote %d files to %s\n", len(files), dir)
	return nil
}
