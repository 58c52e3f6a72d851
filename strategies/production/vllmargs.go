package production

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"optimize/simcore/cluster"
	"optimize/simcore/errtext"
	"optimize/strategies/settings"
)

// vLLM engine arguments, written from a configuration (WriteVLLMArgs) and
// read onto one (ApplyVLLMArgs) through the production column: a setting
// whose counterpart is a vLLM argument is written as `--arg value` and
// read back from it. Beside them are the arguments the simulator always
// assumes (vllmAssumed) and those that change nothing it computes
// (vllmInert).

// vllmAssumed are vLLM arguments the simulator's instances always behave
// as if given: written on every export, accepted on import, and their
// negation an error.
var vllmAssumed = []struct{ arg, why string }{
	{"--enable-chunked-prefill", "the simulator always splits prefills across steps by the token budget"},
	{"--enable-prefix-caching", "the simulator always reuses cached prefix blocks"},
}

// vllmCompanions are arguments written with another: vLLM's native CPU
// offloading is the tier the simulator's CPU blocks model.
var vllmCompanions = []struct{ with, arg, value string }{
	{"--kv-offloading-size", "--kv-offloading-backend", "native"},
}

// vllmInert are vLLM arguments that change nothing the simulator
// computes; import accepts them with a note. (--kv-events-config: the
// simulated instances report their KV events to the precise prefix
// scorer without it; --kv-transfer-config: the simulated P/D pools move
// the KV over the link pd.transfer_* describe.)
var vllmInert = []string{"--host", "--port", "--served-model-name", "--api-key", "--uvicorn-log-level", "--disable-log-requests", "--disable-log-stats", vllmKVEventsArg, kvTransferArg}

// VLLMArgs are c's vLLM arguments, one `--arg=value` (or `--arg`) each —
// one token, so that each pastes as one item of a Kubernetes container's
// args — in SettingLines order, the assumed ones first.
func VLLMArgs(c *cluster.Config) []string {
	var out []string
	for _, a := range vllmAssumed {
		out = append(out, a.arg)
	}
	carried := CarriedSettings(c)
	for _, cr := range carried {
		if cr.System != settings.SystemVLLM || cr.Name == "" || cr.Production == "" || cr.Fidelity == settings.NoCounterpart || cr.Via != "" {
			continue
		}
		out = append(out, cr.Name+"="+cr.Production)
		for _, comp := range vllmCompanions {
			if comp.with == cr.Name {
				out = append(out, comp.arg+"="+comp.value)
			}
		}
	}
	if slices.ContainsFunc(eppOf(carried).scorers, func(s eppWeighted) bool { return s.typ == preciseScorerName }) {
		out = append(out, kvEventsArg(c))
	}
	return out
}

// kvEventsArg is vLLM's --kv-events-config for the precise prefix
// producer: vLLM publishes every KV block it stores or evicts on ZMQ at
// tcp://*:5557, the port the producer's pod discovery subscribes to, on
// the topic kv@<pod IP>@<model> (POD_IP from the pod's status.podIP).
func kvEventsArg(c *cluster.Config) string {
	model := Carry(mustSetting("model"), c).Production
	return fmt.Sprintf(`%s={"enable_kv_cache_events":true,"publisher":"zmq","endpoint":"tcp://*:%d","topic":"kv@$(POD_IP)@%s"}`, vllmKVEventsArg, kvEventsPort, model)
}

// WriteVLLMArgs writes VLLMArgs one a line after header comment lines.
func WriteVLLMArgs(w io.Writer, c *cluster.Config, header []string) error {
	var b strings.Builder
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	for _, a := range VLLMArgs(c) {
		b.WriteString(a + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// vllmSettings are the settings whose counterpart is a vLLM argument.
func vllmSettings() []*settings.Setting {
	var out []*settings.Setting
	for _, s := range settings.All() {
		if s.Production.System == settings.SystemVLLM && s.Production.Name != "" {
			out = append(out, s)
		}
	}
	return out
}

// VLLMArgNames lists every argument --vllm-args accepts, sorted.
func VLLMArgNames() []string {
	var out []string
	for _, s := range vllmSettings() {
		out = append(out, s.Production.Name)
	}
	for _, a := range vllmAssumed {
		out = append(out, a.arg)
	}
	for _, c := range vllmCompanions {
		out = append(out, c.arg)
	}
	out = append(out, vllmInert...)
	slices.Sort(out)
	return slices.Compact(out)
}

// vllmArg is one argument of the file.
type vllmArg struct {
	name, value string
	hasValue    bool
	line        int
}

// parseVLLMArgs splits a file of `vllm serve` arguments: `--arg value`,
// `--arg=value` or `--arg` tokens on any number of lines, `#` starting a
// comment, a trailing `\` continuing the line; a leading `vllm serve
// MODEL` is read as --model MODEL.
func parseVLLMArgs(file string, data []byte) ([]vllmArg, error) {
	type token struct {
		text string
		line int
	}
	var toks []token
	for i, line := range strings.Split(string(data), "\n") {
		if j := strings.Index(line, "#"); j >= 0 {
			line = line[:j]
		}
		for _, f := range strings.Fields(line) {
			if f != "\\" {
				toks = append(toks, token{strings.Trim(f, `"'`), i + 1})
			}
		}
	}
	if len(toks) >= 2 && toks[0].text == "vllm" && toks[1].text == "serve" {
		toks = toks[2:]
		if len(toks) > 0 && !strings.HasPrefix(toks[0].text, "--") {
			toks = append([]token{{"--model", toks[0].line}}, toks...)
		}
	}
	var out []vllmArg
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if long, ok := vllmShort[strings.SplitN(t.text, "=", 2)[0]]; ok {
			t.text = long + strings.TrimPrefix(t.text, strings.SplitN(t.text, "=", 2)[0])
		}
		if !strings.HasPrefix(t.text, "--") {
			return nil, errtext.New(file, "", "line %d: %q is not a --argument (want --arg value, --arg=value or --arg)", t.line, t.text)
		}
		a := vllmArg{name: t.text, line: t.line}
		if name, value, ok := strings.Cut(t.text, "="); ok {
			a.name, a.value, a.hasValue = name, value, true
		} else if i+1 < len(toks) && !strings.HasPrefix(toks[i+1].text, "--") {
			a.value, a.hasValue = toks[i+1].text, true
			i++
		}
		out = append(out, a)
	}
	return out, nil
}

// ApplyVLLMArgs reads a file of vLLM engine arguments onto c. The
// strategy settings with a vLLM counterpart that the file does not give
// take the standard configuration's value (vLLM's default, as the
// simulator has it); the world's (model, TP, block size, KV capacity)
// keep c's. An argument the simulator does not model, or one given twice,
// is a one-line error naming the file and it.
func ApplyVLLMArgs(file string, data []byte, c *cluster.Config) (ImportResult, error) {
	var res ImportResult
	args, err := parseVLLMArgs(file, data)
	if err != nil {
		return res, err
	}
	if err := restoreStandard(c, vllmSettings(), func(s *settings.Setting) bool { return s.Component != settings.CompCluster }); err != nil {
		return res, err
	}
	seen := map[string]int{}
	var scaled []vllmArg // converted after the model and TP are known
	for _, a := range args {
		if line, dup := seen[a.name]; dup {
			return res, errtext.New(file, "", "line %d: %s is also given on line %d; give it once", a.line, a.name, line)
		}
		seen[a.name] = a.line
		if err := vllmFixed(file, a, &res); err != nil || handledFixed(a.name) {
			if err != nil {
				return res, err
			}
			continue
		}
		i := slices.IndexFunc(vllmSettings(), func(s *settings.Setting) bool { return s.Production.Name == a.name })
		if i < 0 {
			return res, errtext.New(file, "", "line %d: vLLM argument %s is not modelled (accepted: %s)", a.line, a.name, strings.Join(VLLMArgNames(), ", "))
		}
		s := vllmSettings()[i]
		if !a.hasValue {
			return res, errtext.New(file, "", "line %d: %s: want a value (%s)", a.line, a.name, s.ValuesText())
		}
		if slices.Contains(vllmHumanInts, a.name) {
			v, err := humanReadableInt(a.value)
			if err != nil {
				return res, errtext.New(file, "", "line %d: %s: %v", a.line, a.name, err)
			}
			a.value = v
		}
		if s.Production.Scale != nil {
			scaled = append(scaled, a)
			continue
		}
		if err := setImported(&res, file, c, s, a.value, fmt.Sprintf("line %d: %s", a.line, a.name)); err != nil {
			return res, err
		}
	}
	for _, a := range scaled {
		s := vllmSettings()[slices.IndexFunc(vllmSettings(), func(s *settings.Setting) bool { return s.Production.Name == a.name })]
		if err := setImported(&res, file, c, s, a.value, fmt.Sprintf("line %d: %s", a.line, a.name)); err != nil {
			return res, err
		}
	}
	return res, nil
}

// handledFixed reports whether name is an assumed, companion or inert
// argument, which vllmFixed handles.
func handledFixed(name string) bool {
	for _, a := range vllmAssumed {
		if name == a.arg || name == noArg(a.arg) {
			return true
		}
	}
	for _, comp := range vllmCompanions {
		if name == comp.arg {
			return true
		}
	}
	return slices.Contains(vllmInert, name)
}

// noArg is a boolean argument's negation: --enable-x → --no-enable-x.
func noArg(arg string) string { return "--no-" + strings.TrimPrefix(arg, "--") }

// vllmFixed checks an assumed, companion or inert argument.
func vllmFixed(file string, a vllmArg, res *ImportResult) error {
	for _, as := range vllmAssumed {
		switch {
		case a.name == noArg(as.arg), a.name == as.arg && a.hasValue && !isTrue(a.value):
			return errtext.New(file, "", "line %d: %s is not modelled: %s", a.line, a.name, as.why)
		}
	}
	for _, comp := range vllmCompanions {
		if a.name == comp.arg && a.value != comp.value {
			return errtext.New(file, "", "line %d: %s %s is not modelled (modelled: %s %s)", a.line, a.name, a.value, comp.arg, comp.value)
		}
	}
	if slices.Contains(vllmInert, a.name) {
		res.Notes = append(res.Notes, fmt.Sprintf("%s: line %d: %s ignored: it changes nothing the simulator computes", file, a.line, a.name))
	}
	return nil
}

func isTrue(v string) bool { return strings.EqualFold(v, "true") || v == "1" }

// The kinds of production config a configuration is read from, in the
// order they apply: vLLM's engine arguments, then the llm-d Router's
// EndpointPickerConfig.
const (
	ProductionVLLMArgs  = "vllm-args"
	ProductionEPPConfig = "epp-config"
)

// Kinds lists the kinds in the order they apply.
var Kinds = []string{ProductionVLLMArgs, ProductionEPPConfig}

// Apply reads a production config of the kind named onto c.
func Apply(kind, file string, data []byte, c *cluster.Config) (ImportResult, error) {
	switch kind {
	case ProductionVLLMArgs:
		return ApplyVLLMArgs(file, data, c)
	case ProductionEPPConfig:
		return ApplyEPPConfig(file, data, c)
	}
	return ImportResult{}, fmt.Errorf("unknown production config kind %q (known: %s)", kind, strings.Join(Kinds, ", "))
}

// vllmShort are vLLM's one-dash aliases of the arguments the simulator
// models (vllm serve -tp 2 is --tensor-parallel-size 2).
var vllmShort = map[string]string{"-tp": "--tensor-parallel-size"}

// vllmHumanInts are the arguments vLLM reads as human-readable integers
// (its human_readable_int): 8k, 1.5m, 2K.
var vllmHumanInts = []string{"--max-model-len", "--max-num-batched-tokens"}

// humanReadableInt reads an integer as vLLM does: a plain integer, or a
// number with a decimal suffix (k, m, g, t: ×10³, 10⁶, 10⁹, 10¹², the
// number may have a fraction) or a binary one (K, M, G, T: ×2¹⁰, 2²⁰,
// 2³⁰, 2⁴⁰, whole numbers only), returned as its decimal text.
func humanReadableInt(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return v, fmt.Errorf("want an integer, e.g. 8192, 8k or 8K")
	}
	last := v[len(v)-1]
	decimal := map[byte]float64{'k': 1e3, 'm': 1e6, 'g': 1e9, 't': 1e12}
	binary := map[byte]int64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}
	number := v[:len(v)-1]
	if m, ok := decimal[last]; ok {
		f, err := strconv.ParseFloat(number, 64)
		if err != nil || f < 0 || strings.ContainsAny(number, "eE+-") {
			return v, fmt.Errorf("%q is not an integer like 8192, 8k or 8K", v)
		}
		return strconv.FormatInt(int64(f*m), 10), nil
	}
	if m, ok := binary[last]; ok {
		n, err := strconv.ParseInt(number, 10, 64)
		if err != nil || n < 0 {
			return v, fmt.Errorf("%q is not an integer like 8192, 8k or 8K (a binary suffix takes a whole number)", v)
		}
		return strconv.FormatInt(n*m, 10), nil
	}
	return v, nil
}
