package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"optimize/simcore"
	"optimize/strategies/settings"
)

// blisVerb is `blis run`'s verb: `optimize simulate run ARGS` runs the
// line `blis run ARGS` as `optimize simulate ARGS` does, so a BLIS command
// line runs after replacing `blis` by `optimize simulate`.
const blisVerb = "run"

// blisValue holds a BLIS flag simulate does not set a setting from
// (ignored, workload-only or rejected); check reads it.
type blisValue struct {
	flag *blisFlag
	raw  string
}

func (v *blisValue) String() string { return v.raw }
func (v *blisValue) Set(s string) error {
	v.raw = s
	return nil
}
func (v *blisValue) Type() string {
	if v.flag.boolean {
		return "bool"
	}
	return "string"
}

// blisFlagSet binds the flags of blisFlags that simulate has no flag of
// its own for, hidden from --help (docs/fidelity.md lists them).
type blisFlagSet struct {
	values map[string]*blisValue
}

// bind registers them on fs, after simulate's own flags (an alias shares
// its target's value).
func (b *blisFlagSet) bind(fs *pflag.FlagSet) {
	b.values = map[string]*blisValue{}
	for i := range blisFlags {
		f := &blisFlags[i]
		var fl *pflag.Flag
		switch f.do {
		case blisOurs, blisDiffers:
			continue
		case blisAlias:
			fl = fs.VarPF(fs.Lookup(f.target).Value, f.name, "", "BLIS "+f.in+"'s name of --"+f.target)
		default:
			v := &blisValue{flag: f}
			b.values[f.name] = v
			fl = fs.VarPF(v, f.name, "", "BLIS "+f.in+" flag: "+f.doText())
			if f.boolean {
				fl.NoOptDefVal = "true"
			}
		}
		fl.Hidden = true
	}
}

// check writes a note for each ignored BLIS flag given and rejects a
// rejected one given at other than BLIS's default.
func (b *blisFlagSet) check(fs *pflag.FlagSet, stderr io.Writer) error {
	if err := checkAugustScorers(fs); err != nil {
		return err
	}
	workloadGiven := changed(fs, "workload-spec") || changed(fs, "trace")
	for i := range blisFlags {
		f := &blisFlags[i]
		if !changed(fs, f.name) {
			continue
		}
		switch f.do {
		case blisAlias:
			if changed(fs, f.target) {
				return fmt.Errorf("--%s: --%s is given too, its other name; give one", f.name, f.target)
			}
		case blisDiffers:
			// BLIS's default workload type beside a spec, which BLIS
			// ignores there: the spec is the workload.
			if f.name == "workload" && workloadGiven && fs.Lookup(f.name).Value.String() == "distribution" {
				fs.Lookup(f.name).Changed = false
			}
		case blisIgnored:
			fmt.Fprintf(stderr, "optimize: note: --%s ignored: %s\n", f.name, f.reason)
		case blisDistribution:
			if workloadGiven {
				fmt.Fprintf(stderr, "optimize: note: --%s ignored beside a workload spec or trace, as BLIS ignores it there\n", f.name)
			}
		case blisWorkloadOnly, blisRejected:
			v := b.values[f.name].raw
			if f.do == blisWorkloadOnly && workloadGiven {
				fmt.Fprintf(stderr, "optimize: note: --%s ignored beside a workload spec or trace, as BLIS ignores it there\n", f.name)
				continue
			}
			if !restates(v, f.def) {
				return fmt.Errorf("--%s %s: %s (BLIS's default, %s, is accepted)", f.name, v, f.reason, quoteEmpty(f.def))
			}
		}
	}
	return nil
}

// restates reports whether a flag's value v is BLIS's default def, as
// numbers where both are numbers (1 restates 1.0).
func restates(v, def string) bool {
	a, errA := strconv.ParseFloat(v, 64)
	b, errB := strconv.ParseFloat(def, 64)
	if errA == nil && errB == nil {
		return a == b
	}
	return v == def
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// doText says what simulate does with the flag, for --help and docs/fidelity.md.
func (f *blisFlag) doText() string {
	switch f.do {
	case blisOurs:
		if keys := settingKeys(f.name); keys != "" {
			return "accepted (" + keys + ")"
		}
		return "accepted"
	case blisAlias:
		return "accepted as --" + f.target
	case blisDiffers:
		return "ours differs"
	case blisIgnored:
		return "ignored, with a note"
	case blisDistribution:
		return "shapes BLIS's distribution workload, synthesised as BLIS does when no workload is named (default `" + f.def + "`); ignored beside --workload-spec"
	case blisWorkloadOnly:
		return "ignored beside --workload-spec, else rejected unless `" + quoteEmpty(f.def) + "`"
	}
	return "rejected unless `" + quoteEmpty(f.def) + "`"
}

// settingKeys names the setting(s) our flag of that name sets: "setting
// scheduler", "settings slo.ttft_target_ms.<class>"; "" for a flag that
// sets none.
func settingKeys(flag string) string {
	for _, s := range settings.All() {
		if s.Flag != flag {
			continue
		}
		if s.Item == "" {
			return "setting `" + s.Key + "`"
		}
		item := "<" + s.Family().Word() + ">"
		if s.Family() == settings.Vector {
			item = "0..2"
		}
		return "settings `" + strings.TrimSuffix(s.Key, s.Item) + item + "`"
	}
	return ""
}

// blisSectionHeading opens docs/fidelity.md's section on BLIS command lines.
const blisSectionHeading = "### BLIS command lines\n\n"

// blisREADME is docs/fidelity.md's section listing blisFlags.
func blisREADME() string {
	var b strings.Builder
	b.WriteString(blisSectionHeading)
	b.WriteString("A `blis run` command line of BLIS 7fd7a88d runs here with `blis` replaced by `optimize simulate`;\n" +
		"one of BLIS f90a1e3a with `--era f90a1e3a` added too, since f90a1e3a changed `blis run`'s defaults\n" +
		"and the era given takes them for what the line leaves unset: the trained-physics latency model,\n" +
		"BLIS's KV estimate (`kv.capacity_rule` blis-f90a1e3a), the weighted profile\n" +
		"precise-prefix-cache-scorer 2, queue-scorer 1, kv-cache-utilization-scorer 1, a 50 ms\n" +
		"cache-signal delay and a 50 ms snapshot refresh. BLIS's default workload, `--workload\n" +
		"distribution`, is synthesised from `--rate`, `--num-requests` (BLIS's default 100),\n" +
		"`--prompt-tokens…`, `--output-tokens…` and `--prefix-tokens` as BLIS synthesises it (one client,\n" +
		"constant arrivals, gaussian lengths, the run's seed). The P/D, flow-control and autoscaler lines\n" +
		"of BENCHMARKS.md run so, unchanged (but one, below), and equal BLIS's figures (TestBLISf90a1e3aPD,\n" +
		"TestBLISf90a1e3aFlowControl, TestBLISf90a1e3aAutoscaler). Not carried over: f90a1e3a's\n" +
		"division of a spec's aggregate rate among the clients whose lifecycle windows overlap (here,\n" +
		"as in 7fd7a88d, among all clients: `workload fit` writes a rate curve as clients in disjoint\n" +
		"windows whose fractions are the curve; two clients in disjoint windows arrive here at half\n" +
		"f90a1e3a's rate, so the autoscaler's gap line runs a copy of its spec at twice the rate);\n" +
		"f90a1e3a's scorer names that\n" +
		"7fd7a88d lacks (`precise-prefix-cache`, `no-hit-lru`, `active-requests`, … — name the llm-d\n" +
		"plugin type) and its `queue-depth`, which reads the waiting queue alone (refused under\n" +
		"`--era f90a1e3a`, naming queue-scorer, llm-d's scorer of the same arithmetic); BLIS's preset\n" +
		"workloads (`--workload chatbot`, …) and its closed-loop `--concurrency` workload.\n\n" +
		"`run` is accepted as simulate's only argument, and a flag that restates\n" +
		"its default is never an error (an inert non-default value still is). Each flag of `blis run`\n" +
		"is accepted (BLIS's name and meaning), ignored with a one-line note on stderr, or rejected\n" +
		"with a one-line error; a rejected flag at BLIS's default is accepted, as it leaves the\n" +
		"mechanism off as it is here. This table is generated from the list simulate reads\n" +
		"(internal/cli/blisflags_table.go).\n\n")
	b.WriteString("| BLIS flag | BLIS | here | why |\n|---|---|---|---|\n")
	for _, f := range blisFlags {
		why := f.reason
		fmt.Fprintf(&b, "| `--%s` | %s | %s | %s |\n", f.name, f.in, f.doText(), strings.ReplaceAll(why, "|", "\\|"))
	}
	return b.String()
}

// checkAugustScorers refuses, on a command line that names era f90a1e3a,
// the scorer name whose meaning BLIS f90a1e3a changed: its queue-depth
// reads the waiting queue alone (llm-d's queue-scorer), where this
// simulator's is 7fd7a88d's (waiting + running + in flight). Run
// silently, an f90a1e3a line would score another signal. (A settings
// file names this simulator's scorers, whatever its era.)
func checkAugustScorers(fs *pflag.FlagSet) error {
	if !changed(fs, "era") || fs.Lookup("era").Value.String() != string(simcore.EraAugust2026) {
		return nil
	}
	for _, flag := range []string{"routing-scorers", "prefill-routing-scorers", "decode-routing-scorers"} {
		if !changed(fs, flag) {
			continue
		}
		for _, term := range strings.Split(fs.Lookup(flag).Value.String(), ",") {
			if name, _, _ := strings.Cut(strings.TrimSpace(term), ":"); name == "queue-depth" {
				return fmt.Errorf("--%s: queue-depth under --era f90a1e3a: BLIS f90a1e3a's reads the waiting queue alone; name it queue-scorer (llm-d's, the same arithmetic); queue-depth here is 7fd7a88d's (waiting + running + in-flight requests)", flag)
			}
		}
	}
	return nil
}
