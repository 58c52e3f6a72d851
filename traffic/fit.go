package traffic

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"optimize/simcore/workload"
)

// FitOptions tune Fit.
type FitOptions struct {
	Name string // the trace, named in the spec's header
	Seed int64  // the spec's seed
	// Bins is the number of quantile bins of an empirical length
	// distribution (default 200; a quarter as many per prefix group).
	Bins int
}

// Part is one fitted part of a spec: the model chosen and its
// Kolmogorov–Smirnov distance to the trace.
type Part struct {
	Name  string  `json:"part"`
	Model string  `json:"model"`
	KS    float64 `json:"ks"` // of the model to the trace's sample
	// Candidates are every model tried, best first (lengths only).
	Candidates []Candidate `json:"candidates,omitempty"`
}

// Fitted is a spec fitted to a trace.
type Fitted struct {
	Spec  *workload.Spec `json:"-"`
	Parts []Part         `json:"parts"`
	// ClientCV is the inter-arrival CV of each client's gamma process.
	ClientCV float64 `json:"client_cv"`
	// Groups are the prefix groups (none without prefix identity).
	Groups []PrefixGroup `json:"prefix_groups"`
}

// PrefixGroup is a share of the requests that start with one shared
// prefix of Tokens tokens.
type PrefixGroup struct {
	Name   string  `json:"name"`
	Tokens int     `json:"tokens"`
	Share  float64 `json:"share"`
}

// segment is a stretch of the trace whose requests a client with its own
// rate sends.
type segment struct {
	start, end int64 // µs, [start, end)
	requests   int
}

// Fit fits a v2 workload spec to a trace's figures. The rate over time is
// kept window by window (st's windows): one client per window, active
// only in it, at the window's rate, so the generated stream has the
// trace's mean and peak window rates. Each client's arrivals are a gamma
// process whose CV makes the whole stream's inter-arrival CV the
// trace's. Input and output lengths take the length model nearest the
// trace (smallest KS distance). With prefix identity the requests that
// reuse a prefix are split by its length into up to three prefix groups,
// each client then split by group share.
func Fit(st *Stats, opt FitOptions) (*Fitted, error) {
	if st.Requests < 3 || st.SpanS <= 0 {
		return nil, fmt.Errorf("%s: a fit needs at least 3 requests over a positive span, got %d over %g s", opt.Name, st.Requests, st.SpanS)
	}
	bins := opt.Bins
	if bins <= 0 {
		bins = 200
	}
	f := &Fitted{}
	segs := segments(st)
	cv := gammaCV(segs, st.InterArrivalCV, st.Requests)
	f.ClientCV = cv
	f.Parts = append(f.Parts, Part{Name: "arrival", Model: fmt.Sprintf("gamma, CV %.3f, rate per %gs window", cv, st.WindowS), KS: arrivalKS(st, segs, cv)})

	groups, members := prefixGroups(st)
	f.Groups = groups
	groupBins := bins
	if len(groups) > 1 {
		groupBins = max(20, bins/4)
	}
	spec := &workload.Spec{Version: "2", Seed: opt.Seed, Horizon: segs[len(segs)-1].end, Name: opt.Name}
	inputs := make([]workload.Distribution, len(groups))
	for g := range groups {
		newInput := make([]int, 0, len(members[g]))
		for _, i := range members[g] {
			newInput = append(newInput, max(1, st.Inputs[i]-groups[g].Tokens))
		}
		cands := fitLengths(newInput, groupBins)
		inputs[g] = cands[0].Distribution
		name := "input"
		if len(groups) > 1 {
			name = fmt.Sprintf("input after prefix group %s (%d tokens)", groups[g].Name, groups[g].Tokens)
		}
		f.Parts = append(f.Parts, Part{Name: name, Model: cands[0].Model, KS: cands[0].KS, Candidates: cands})
	}
	outCands := fitLengths(st.Outputs, bins)
	f.Parts = append(f.Parts, Part{Name: "output", Model: outCands[0].Model, KS: outCands[0].KS, Candidates: outCands})

	total := 0.0
	for _, s := range segs {
		total += segRate(s)
	}
	spec.AggregateRate = total
	for k, s := range segs {
		for g, grp := range groups {
			c := workload.Client{
				ID:           fmt.Sprintf("w%03d", k),
				SLOClass:     "standard",
				RateFraction: segRate(s) * grp.Share / total,
				Arrival:      workload.Arrival{Process: "gamma", CV: &cv},
				Input:        inputs[g],
				Output:       outCands[0].Distribution,
				Lifecycle:    &workload.Lifecycle{Windows: []workload.Window{{StartUs: s.start, EndUs: s.end}}},
			}
			if grp.Tokens > 0 {
				c.ID += "-" + grp.Name
				c.PrefixGroup = grp.Name
				tokens := grp.Tokens
				c.PrefixLength = &tokens
			}
			spec.Clients = append(spec.Clients, c)
		}
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("fitted spec: %w", err)
	}
	f.Spec = spec
	return f, nil
}

// segments are the trace's windows with requests in them, the last
// ending just after the last arrival.
func segments(st *Stats) []segment {
	w := int64(math.Round(st.WindowS * 1e6))
	end := st.Arrivals[st.Requests-1] + 1
	var out []segment
	for i, win := range st.Windows {
		if win.Requests == 0 {
			continue
		}
		s := segment{start: int64(i) * w, end: min(int64(i+1)*w, end), requests: win.Requests}
		out = append(out, s)
	}
	return out
}

func segRate(s segment) float64 { return float64(s.requests) / (float64(s.end-s.start) / 1e6) }

// gammaCV is the CV c of each segment's gamma gaps that gives the whole
// stream the inter-arrival CV target. A gap falls in segment k with
// probability w_k = n_k/N and then has mean 1/r_k and second moment
// (1+c²)/r_k², so the stream's gaps have mean m = Σ w_k/r_k and
// E[X²] = (1+c²)·S with S = Σ w_k/r_k²; CV² = E[X²]/m² − 1 gives
// c² = (CV²+1)·m²/S − 1. Clamped to the gamma process's (0.05, 10].
func gammaCV(segs []segment, target float64, n int) float64 {
	var m, s float64
	for _, seg := range segs {
		w, r := float64(seg.requests)/float64(n), segRate(seg)/1e6
		m += w / r
		s += w / (r * r)
	}
	c2 := (target*target+1)*m*m/s - 1
	return round3(min(10, max(0.05, math.Sqrt(max(0, c2)))))
}

// arrivalKS is the KS distance of the trace's gaps, each scaled by its
// window's rate (so mean 1), to the unit-mean gamma of CV cv.
func arrivalKS(st *Stats, segs []segment, cv float64) float64 {
	rate := map[int64]float64{}
	for _, s := range segs {
		rate[s.start] = segRate(s) / 1e6
	}
	w := int64(math.Round(st.WindowS * 1e6))
	gaps := make([]float64, 0, st.Requests-1)
	for i := 1; i < st.Requests; i++ {
		start := st.Arrivals[i] / w * w
		gaps = append(gaps, float64(st.Arrivals[i]-st.Arrivals[i-1])*rate[start])
	}
	slices.Sort(gaps)
	shape := 1 / (cv * cv)
	g := distuv.Gamma{Alpha: shape, Beta: shape}
	n := float64(len(gaps))
	d := 0.0
	for i, x := range gaps {
		f := g.CDF(x)
		d = max(d, math.Abs(float64(i+1)/n-f), math.Abs(float64(i)/n-f))
	}
	return d
}

// prefixGroups splits the requests by the tokens of their leading blocks
// an earlier request had: those with none, and those with some in up to
// three groups of equal count by that length, each group's prefix the
// shortest of its members' (so that no member's prompt is shorter than
// its group's prefix, and the prompt lengths stay the trace's). Without prefix identity every request is in
// one group with no prefix.
func prefixGroups(st *Stats) ([]PrefixGroup, [][]int) {
	all := make([]int, st.Requests)
	for i := range all {
		all[i] = i
	}
	if st.PrefixReused == nil {
		return []PrefixGroup{{Name: "none", Share: 1}}, [][]int{all}
	}
	var none, reusing []int
	for i, t := range st.PrefixReused {
		if t > 0 {
			reusing = append(reusing, i)
		} else {
			none = append(none, i)
		}
	}
	slices.SortStableFunc(reusing, func(a, b int) int { return st.PrefixReused[a] - st.PrefixReused[b] })
	var groups []PrefixGroup
	var members [][]int
	if len(none) > 0 {
		groups = append(groups, PrefixGroup{Name: "none", Share: float64(len(none)) / float64(st.Requests)})
		members = append(members, none)
	}
	const parts = 3
	for p := range parts {
		lo, hi := p*len(reusing)/parts, (p+1)*len(reusing)/parts
		if hi <= lo {
			continue
		}
		m := reusing[lo:hi]
		groups = append(groups, PrefixGroup{Name: fmt.Sprintf("p%d", p+1), Tokens: st.PrefixReused[m[0]],
			Share: float64(len(m)) / float64(st.Requests)})
		members = append(members, m)
	}
	return groups, members
}
