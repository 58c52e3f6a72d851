package cli

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// flagValueError words pflag's refusal of a flag's value as one line of
// ours: the flag, the value and what it accepts. pflag's own text quotes
// strconv ("strconv.ParseInt: parsing "abc": invalid syntax"). Other
// flag errors (unknown flag, missing value) pass through.
func flagValueError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return err
	}
	f := ive.GetFlag()
	// A value of ours (seedList) says what is wrong itself.
	var own seedsError
	if errors.As(err, &own) {
		return fmt.Errorf("--%s: %v", f.Name, own)
	}
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("--%s: %q is out of range", f.Name, ive.GetValue())
	}
	allowed := map[string]string{
		"int": "a whole number", "int64": "a whole number", "uint": "a whole number (0 or more)",
		"float64":  "a number",
		"duration": "a duration such as 500ms, 30s or 2m",
		"bool":     "true or false",
	}[f.Value.Type()]
	if allowed == "" {
		return fmt.Errorf("--%s: %q is not a valid value", f.Name, ive.GetValue())
	}
	if f.DefValue != "" && f.Value.Type() != "bool" {
		allowed += " (default " + f.DefValue + ")"
	}
	return fmt.Errorf("--%s: %q is not %s", f.Name, ive.GetValue(), allowed)
}

// seedList is a --seeds flag: seeds and ranges, "42,43,44", "100-109" or
// a mix. A later --seeds adds to the list the first one replaced (the
// default), as pflag's lists do.
type seedList struct {
	seeds *[]int64
	set   bool
}

func newSeedList(seeds *[]int64, defaults []int64) *seedList {
	*seeds = defaults
	return &seedList{seeds: seeds}
}

func (l *seedList) Type() string { return "seeds" }

func (l *seedList) String() string {
	if l.seeds == nil {
		return ""
	}
	parts := make([]string, len(*l.seeds))
	for i, s := range *l.seeds {
		parts[i] = strconv.FormatInt(s, 10)
	}
	return strings.Join(parts, ",")
}

func (l *seedList) Set(text string) error {
	seeds, err := parseSeeds(text)
	if err != nil {
		return err
	}
	if l.set {
		seeds = append(slices.Clone(*l.seeds), seeds...)
		if err := noRepeats(seeds); err != nil {
			return err
		}
	}
	*l.seeds, l.set = seeds, true
	return nil
}

// seedsError is a --seeds value's mistake, in our words.
type seedsError string

func (e seedsError) Error() string { return string(e) }

// maxSeedRange bounds one range (a typo such as 100-1000000 would
// otherwise ask for a million simulations).
const maxSeedRange = 10000

var seedPart = regexp.MustCompile(`^(-?\d+)(?:\s*-\s*(-?\d+))?$`)

// parseSeeds reads "100-109" or "100,101,105" (or a mix); "" is no seed.
func parseSeeds(s string) ([]int64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		m := seedPart.FindStringSubmatch(part)
		if m == nil {
			return nil, seedsError(fmt.Sprintf("%q is not a seed or a range of seeds (allowed: 42, 42,43,44 or 100-109)", part))
		}
		lo, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return nil, seedsError(fmt.Sprintf("%q is out of range", part))
		}
		hi := lo
		if m[2] != "" {
			if hi, err = strconv.ParseInt(m[2], 10, 64); err != nil {
				return nil, seedsError(fmt.Sprintf("%q is out of range", part))
			}
		}
		switch {
		case hi < lo:
			return nil, seedsError(fmt.Sprintf("range %s is reversed: write %d-%d", part, hi, lo))
		case hi-lo >= maxSeedRange:
			return nil, seedsError(fmt.Sprintf("range %s holds %d seeds; at most %d", part, uint64(hi-lo)+1, maxSeedRange))
		}
		for v := lo; v <= hi; v++ {
			out = append(out, v)
		}
	}
	if err := noRepeats(out); err != nil {
		return nil, err
	}
	return out, nil
}

// noRepeats refuses a seed listed twice (it would be simulated twice and
// count twice in every mean).
func noRepeats(seeds []int64) error {
	seen := make(map[int64]bool, len(seeds))
	for _, s := range seeds {
		if seen[s] {
			return seedsError(fmt.Sprintf("seed %d given twice", s))
		}
		seen[s] = true
	}
	return nil
}
