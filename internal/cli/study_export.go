package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"optimize/storage"
	"optimize/studies"
	"optimize/studies/report"
)

func newStudyExport(s Streams, f *studyFlags) *cobra.Command {
	var format, out string
	var pareto, validation, ablation, history bool
	var trial int
	cmd := &cobra.Command{
		Use:   "export NAME",
		Short: "Export every trial (or the Pareto front, the validation, the ablation) as CSV or JSON, one trial's settings or llm-d configs, or the study for Optuna",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := report.CheckFormat(format); err != nil {
				return err
			}
			settings, optuna := format == report.SettingsFormat, format == report.OptunaFormat
			llmd := format == report.LLMDFormat
			if cmd.Flags().Changed("trial") && !settings && !llmd {
				return fmt.Errorf("--trial: only with --format %s or %s (the other formats export every trial)", report.SettingsFormat, report.LLMDFormat)
			}
			if (settings || llmd) && (pareto || validation || ablation || history) {
				what := map[bool]string{true: "settings", false: "configs"}[settings]
				return fmt.Errorf("--format %s: one trial's %s (--trial N, else the best); --pareto, --validation, --ablation and --history export csv or json", format, what)
			}
			if llmd && (out == "" || out == "-") {
				return fmt.Errorf("--format %s: give -o DIR, the directory to write %s, %s, %s (if the strategy uses class priority) and %s to",
					report.LLMDFormat, report.EPPConfigFile, report.VLLMArgsFile, report.ObjectivesFile, report.MappingFile)
			}
			if optuna && (pareto || validation || ablation || history) {
				return fmt.Errorf("--format %s: the whole study as Optuna's journal; --pareto, --validation, --ablation and --history export csv or json", report.OptunaFormat)
			}
			return f.withStudy(s, args[0], func(env *studies.Env, row *storage.Study) error {
				r, err := report.Load(env.Store, env.Registry, row.Name)
				if err != nil {
					return studyError(err)
				}
				// Everything is built before anything is written: a mistake
				// leaves no empty or half-written file behind.
				if llmd {
					return writeLLMD(s, env, r, trial, cmd.Flags().Changed("trial"), out)
				}
				var buf bytes.Buffer
				switch {
				case settings:
					if err := writeTrialSettings(&buf, r, trial, cmd.Flags().Changed("trial")); err != nil {
						return err
					}
				case optuna:
					err = r.WriteOptuna(&buf, env.Store)
				case history:
					if format != "json" {
						return fmt.Errorf("--history: only --format json")
					}
					err = report.WriteJSON(&buf, r.History())
				case validation, ablation:
					kind := report.EvidenceAblation
					if validation {
						kind = report.EvidenceValidation
					}
					if err := env.LoadEvidence(r); err != nil {
						return studyError(err)
					}
					err = r.ExportEvidence(&buf, kind, format)
					if errors.Is(err, report.ErrNoEvidence) {
						return fmt.Errorf("--%s: %v", kind, err)
					}
				default:
					err = r.Export(&buf, format, pareto)
				}
				if err == nil {
					err = r.DetailErr()
				}
				if err != nil {
					return failed(err)
				}
				return writeFile(s, out, buf.Bytes())
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "csv", strings.Join(report.ExportFormats, ", ")+" ("+report.SettingsFormat+": one trial's settings as key: value YAML, which simulate --settings runs again; "+
		report.OptunaFormat+": the whole study as Optuna's JournalStorage log, which optuna.load_study opens with JournalFileStorage; "+
		report.LLMDFormat+": one trial as an llm-d EndpointPickerConfig, vLLM arguments, InferenceObjectives and MAPPING.md, in the directory -o names)")
	cmd.Flags().IntVar(&trial, "trial", 0, "with --format "+report.SettingsFormat+" or "+report.LLMDFormat+": the trial (default: the best)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default stdout); with --format "+report.LLMDFormat+", the directory")
	cmd.Flags().BoolVar(&pareto, "pareto", false, "only the Pareto-optimal trials among those within the constraints")
	cmd.Flags().BoolVar(&validation, "validation", false, "the stored validation instead of the trials")
	cmd.Flags().BoolVar(&ablation, "ablation", false, "the stored ablation instead of the trials")
	cmd.Flags().BoolVar(&history, "history", false, "per trial: objectives, score, best so far, feasibility; and the hypervolume so far")
	cmd.MarkFlagsMutuallyExclusive("pareto", "validation", "ablation", "history")
	return cmd
}

// writeLLMD writes trial n's llm-d export (the best trial's when n is not
// given) to dir, with what production gets of it — the files alone, run
// in the study's world against its baseline — printed and in MAPPING.md.
func writeLLMD(s Streams, env *studies.Env, r *report.Report, n int, given bool, dir string) error {
	files, err := r.ExportLLMD(n, given)
	if err != nil {
		return studyError(err)
	}
	if n, err = r.ExportedTrial(n, given); err != nil {
		return studyError(err)
	}
	var vllm, epp, objectives []byte
	for _, f := range files {
		switch f.Name {
		case report.VLLMArgsFile, report.VLLMArgsDecodeFile:
			vllm = f.Data
		case report.EPPConfigFile:
			epp = f.Data
		case report.ObjectivesFile:
			objectives = f.Data
		}
	}
	d, err := env.Deployed(r, n, vllm, epp, objectives)
	if err != nil {
		return failed(err)
	}
	r.WriteDeployed(s.Out, d)
	return writeFiles(s, dir, r.WithDeployed(files, d))
}
