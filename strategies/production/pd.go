package production

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/simcore/keys"
	"optimize/strategies/settings"
)

// Prefill/decode disaggregation in production: the llm-d Router's P/D
// profile handler with a prefill and a decode profile, each filtering its
// role's pods, and two vLLM Deployments (prefill and decode) whose pods
// move the prompt's KV with NIXL.

// The names the export writes.
const (
	singleProfileHandler = "single-profile-handler"
	defaultProfile       = "default"
	// llm-d's handler runs the profiles of these names unless its
	// parameters name others (profiles.prefill, profiles.decode).
	prefillProfile = "prefill"
	decodeProfile  = "decode"
	// The roles of the vLLM argument files.
	RolePrefill = "prefill"
	RoleDecode  = "decode"
	// tpArg is vLLM's tensor parallelism, the one argument the two roles'
	// files may give differently.
	tpArg = "--tensor-parallel-size"
	// kvTransferArg is vLLM's KV connector: NIXL, each pod both sending
	// and receiving (kv_both), as llm-d's P/D guide runs prefill and
	// decode pods.
	kvTransferArg   = "--kv-transfer-config"
	kvTransferValue = `{"kv_connector":"NixlConnector","kv_role":"kv_both"}`
)

// Topology affinity (llm-d's topology-extractor, -filter and -scorer)
// compares each pod's host, rack, zone and region with the peer pod the
// P/D handler picked first; the simulator's instances are all equally
// near, so the filter keeps every endpoint and the scorer gives every
// endpoint the same score.
var topologyTypes = []string{"topology-extractor", "topology-affinity-filter", "topology-affinity-scorer"}

const topologyWhy = "every simulated instance is equally near (one topology): the filter keeps every endpoint and the scorer gives each the same score, which moves no max-score-picker's or random-picker's pick"

// pdProfiles writes the P/D profiles: with a decider, the prefill and
// decode profiles under llm-d's P/D profile handler, its deciders.prefill
// the decider plugin; without one (pd.decider never), the one profile
// over the decode pods. profile is the picker and the scorers, the same
// in both (the simulator's pools route with one policy).
func (f *eppFile) pdProfiles(p eppProfile, profile []eppWeighted) {
	withFilter := func(filter string) []eppWeighted {
		return append([]eppWeighted{{filter, ""}}, profile...)
	}
	if p.decider == "" {
		f.plugin(settings.PDDecodeFilter, "")
		f.plugin(singleProfileHandler, "")
		f.profiles = []eppSchedProfile{{defaultProfile, withFilter(settings.PDDecodeFilter)}}
		return
	}
	f.plugin(settings.PDPrefillFilter, "")
	f.plugin(settings.PDDecodeFilter, "")
	f.plugin(p.decider, "")
	h := f.plugin(settings.PDProfileHandler, "")
	h.params = []eppParam{{"deciders", "{prefill: " + p.decider + "}"}}
	f.profiles = []eppSchedProfile{
		{prefillProfile, withFilter(settings.PDPrefillFilter)},
		{decodeProfile, withFilter(settings.PDDecodeFilter)},
	}
}

// roleTP is the tensor parallelism of a role's pods: the pool's TP
// (pd.prefill_tp, pd.decode_tp), 0 meaning tp.
func roleTP(c *cluster.Config, role string) int {
	tp := c.PD.DecodeTP
	if role == RolePrefill {
		tp = c.PD.PrefillTP
	}
	if tp > 0 {
		return tp
	}
	return c.TP
}

// VLLMRoleArgs are the vLLM arguments of one role's pods under P/D: the
// cluster's (VLLMArgs), with the role's --tensor-parallel-size and the
// NIXL KV connector.
func VLLMRoleArgs(c *cluster.Config, role string) []string {
	var out []string
	for _, a := range VLLMArgs(c) {
		if name, _, _ := strings.Cut(a, "="); name == tpArg {
			a = tpArg + "=" + strconv.Itoa(roleTP(c, role))
		}
		out = append(out, a)
	}
	return append(out, kvTransferArg+"="+kvTransferValue)
}

// WriteVLLMRoleArgs writes VLLMRoleArgs one a line after header comment
// lines.
func WriteVLLMRoleArgs(w io.Writer, c *cluster.Config, role string, header []string) error {
	var b strings.Builder
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	for _, a := range VLLMRoleArgs(c, role) {
		b.WriteString(a + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// PDTPSets are the `KEY=VALUE` settings a P/D export's re-run needs
// beside the world's: the decode file's --tensor-parallel-size is the
// decode pods', which simulate reads as tp, so a tp of its own (for
// instances in no pool, and what a pool TP of 0 means) is restated.
func PDTPSets(c *cluster.Config) []string {
	if !c.PD.Enabled() || roleTP(c, RoleDecode) == c.TP {
		return nil
	}
	return []string{"tp=" + strconv.Itoa(c.TP)}
}

// ApplyPrefillVLLMArgs reads the prefill pods' vLLM arguments onto c,
// whose decode pods' arguments were read from decodeData (--vllm-args):
// every argument but --tensor-parallel-size and --kv-transfer-config must
// be the decode pods' (the simulator's pools share one engine
// configuration); the prefill pods' TP, where it is not tp, is
// pd.prefill_tp.
func ApplyPrefillVLLMArgs(file string, data []byte, decodeFile string, decodeData []byte, c *cluster.Config) (ImportResult, error) {
	var res ImportResult
	prefill, err := parseVLLMArgs(file, data)
	if err != nil {
		return res, err
	}
	decode, err := parseVLLMArgs(decodeFile, decodeData)
	if err != nil {
		return res, err
	}
	shared := func(args []vllmArg) map[string]vllmArg {
		m := map[string]vllmArg{}
		for _, a := range args {
			if a.name != tpArg && a.name != kvTransferArg {
				m[a.name] = a
			}
		}
		return m
	}
	p, d := shared(prefill), shared(decode)
	for _, a := range prefill {
		if da, ok := d[a.name]; a.name != tpArg && a.name != kvTransferArg && (!ok || da.value != a.value) {
			return res, pdArgsDiffer(file, decodeFile, a, da, ok)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d)) {
		if _, ok := p[name]; !ok {
			return res, errtext.New(file, "", "%s (line %d of %s, the decode pods' arguments) is not given: the simulator's prefill and decode pods share every vLLM argument but %s", name, d[name].line, decodeFile, tpArg)
		}
	}
	i := slices.IndexFunc(prefill, func(a vllmArg) bool { return a.name == tpArg })
	if i < 0 {
		return res, nil
	}
	tp, err := strconv.Atoi(prefill[i].value)
	if err != nil || tp < 1 {
		return res, errtext.New(file, "", "line %d: %s %q: want a whole number ≥ 1", prefill[i].line, tpArg, prefill[i].value)
	}
	if tp == c.TP {
		tp = 0 // the decode pods' TP, which is tp
	}
	return res, setImported(&res, file, c, mustSetting(keys.PDPrefillTP), strconv.Itoa(tp), fmt.Sprintf("line %d: %s", prefill[i].line, tpArg))
}

func pdArgsDiffer(file, decodeFile string, a, da vllmArg, inDecode bool) error {
	if !inDecode {
		return errtext.New(file, "", "line %d: %s is not among the decode pods' arguments (%s): the simulator's prefill and decode pods share every vLLM argument but %s", a.line, a.name, decodeFile, tpArg)
	}
	return errtext.New(file, "", "line %d: %s %s differs from the decode pods' %s (%s line %d): the simulator's prefill and decode pods share every vLLM argument but %s", a.line, a.name, a.value, da.value, decodeFile, da.line, tpArg)
}
