package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"optimize/simcore/workload"
)

// BLIS's default workload, `--workload distribution`, is a v2 spec it
// synthesises from flags: one client, constant arrivals at --rate
// requests/s, gaussian prompt and output lengths (--prompt-tokens and
// --output-tokens with their -stdev, -min and -max), a shared prefix of
// --prefix-tokens when positive, the run's seed, and --num-requests
// requests (BLIS's default 100). simulate synthesises the same spec when
// no workload is named and one of those flags is given, or --workload
// distribution is: the run is BLIS's, request for request.

// blisDefaultRequests is `blis run`'s --num-requests default.
const blisDefaultRequests = 100

// distributionName is BLIS's name of the synthesised workload.
const distributionName = "distribution"

// distribution returns the synthesised spec when the command line asks
// for BLIS's distribution workload, nil when it names another.
func (b *blisFlagSet) distribution(fs *pflag.FlagSet) (*workload.Spec, error) {
	var given []string
	for i := range blisFlags {
		if f := &blisFlags[i]; f.do == blisDistribution && changed(fs, f.name) {
			given = append(given, "--"+f.name)
		}
	}
	named := changed(fs, "workload") && fs.Lookup("workload").Value.String() == distributionName
	switch {
	case changed(fs, "workload-spec") || changed(fs, "trace"):
		return nil, nil // the spec or trace is the workload; check noted the flags
	case changed(fs, "workload") && !named && len(given) > 0:
		return nil, fmt.Errorf("%s: it shapes BLIS's distribution workload, and --workload %s names a built-in one; drop one (--workload distribution, or no --workload, synthesises BLIS's)",
			given[0], fs.Lookup("workload").Value.String())
	case !named && len(given) == 0:
		return nil, nil
	}
	num := func(name string) (float64, error) {
		raw := b.values[name].raw
		if !changed(fs, name) {
			raw = b.values[name].flag.def
		}
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("--%s: want a finite number, got %q", name, raw)
		}
		return v, nil
	}
	rate, err := num("rate")
	if err != nil {
		return nil, err
	}
	if !(rate > 0) {
		return nil, fmt.Errorf("--rate: must be a finite number > 0 requests/s, got %v", rate)
	}
	lengths := map[string]int{}
	for _, name := range []string{"prompt-tokens", "prompt-tokens-stdev", "prompt-tokens-min", "prompt-tokens-max",
		"output-tokens", "output-tokens-stdev", "output-tokens-min", "output-tokens-max", "prefix-tokens"} {
		v, err := num(name)
		if err != nil {
			return nil, err
		}
		if v != math.Trunc(v) || v < 0 || v > math.MaxInt32 {
			return nil, fmt.Errorf("--%s: want a whole number of tokens in [0, 2^31), got %v", name, v)
		}
		lengths[name] = int(v)
	}
	for _, side := range []string{"prompt-tokens", "output-tokens"} {
		if err := checkLengths(side, lengths); err != nil {
			return nil, err
		}
	}
	var yaml strings.Builder
	fmt.Fprintf(&yaml, "version: \"2\"\ncategory: language\naggregate_rate: %v\nnum_requests: %d\nclients:\n", rate, blisDefaultRequests)
	fmt.Fprintf(&yaml, "  - id: distribution\n    rate_fraction: 1.0\n    arrival: {process: constant}\n")
	for _, d := range []struct{ field, side string }{{"input_distribution", "prompt-tokens"}, {"output_distribution", "output-tokens"}} {
		fmt.Fprintf(&yaml, "    %s: {type: gaussian, params: {mean: %d, std_dev: %d, min: %d, max: %d}}\n", d.field,
			lengths[d.side], lengths[d.side+"-stdev"], lengths[d.side+"-min"], lengths[d.side+"-max"])
	}
	if p := lengths["prefix-tokens"]; p > 0 {
		fmt.Fprintf(&yaml, "    prefix_group: shared\n    prefix_length: %d\n", p)
	}
	spec, err := workload.ParseSpec(distributionName, []byte(yaml.String()))
	if err != nil {
		return nil, fmt.Errorf("BLIS's distribution workload (%s): %v", strings.Join(given, ", "), err)
	}
	return spec, nil
}

// checkLengths makes BLIS's checks of one length distribution: min and
// max ≥ 1, min ≤ max, mean and a non-zero stdev within [min, max].
func checkLengths(side string, l map[string]int) error {
	mean, stdev, lo, hi := l[side], l[side+"-stdev"], l[side+"-min"], l[side+"-max"]
	switch {
	case lo < 1:
		return fmt.Errorf("--%s-min: must be ≥ 1, got %d", side, lo)
	case hi < lo:
		return fmt.Errorf("--%s-max: must be ≥ --%s-min (%d), got %d", side, side, lo, hi)
	case mean < lo || mean > hi:
		return fmt.Errorf("--%s: must be in [--%s-min, --%s-max] = [%d, %d], got %d", side, side, side, lo, hi, mean)
	case stdev > hi || (stdev != 0 && stdev < lo):
		return fmt.Errorf("--%s-stdev: must be 0 or in [%d, %d] (BLIS's check), got %d", side, lo, hi, stdev)
	}
	return nil
}
