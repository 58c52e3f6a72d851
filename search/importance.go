package search

import (
	"math"
	"sort"
)

// maxImportanceBins bounds the bins per parameter; fewer bins are used for
// small studies (about √n) so each bin holds several trials.
const maxImportanceBins = 10

// Importance estimates how much each parameter drives the score, over
// completed trials (values[i] is trial i's vector in space order).
//
// Per parameter: the trials are grouped into bins of that parameter —
// one bin per value for categoricals and for ints with few values, else
// about √n equal-count bins along the axis (rank-based, so log and linear
// scales agree) — and the share of the variance of the score RANKS that
// the bin means explain is measured as epsilon-squared,
// (SS_between − (k−1)·MS_within) / SS_total, clamped at 0. Ranks make
// penalty outliers harmless; the (k−1)·MS_within term removes the share a
// parameter with no effect would explain by chance. The results are
// normalised to sum to 1 when any is positive (all zeros otherwise, e.g.
// with fewer than 4 usable trials). One-at-a-time: interactions are not
// attributed, so read it as a ranking, not an exact decomposition. A NaN
// value (a conditional parameter, inactive in that trial) is a bin of its
// own: being inactive is one of the parameter's states.
func Importance(values [][]Value, scores []float64, space Space) []float64 {
	importance := make([]float64, len(space))
	rows, ys := usableTrials(values, scores, space)
	n := len(ys)
	if n < 4 {
		return importance
	}
	ranks := averageRanks(ys)
	mean := float64(n+1) / 2
	total := 0.0
	for _, r := range ranks {
		total += (r - mean) * (r - mean)
	}
	if total == 0 {
		return importance
	}
	sum := 0.0
	for j, p := range space {
		column := make([]float64, n)
		for i := range rows {
			column[i] = rows[i][j]
		}
		importance[j] = epsilonSquared(binWithInactive(column, p), ranks, mean, total)
		sum += importance[j]
	}
	if sum > 0 {
		for j := range importance {
			importance[j] /= sum
		}
	}
	return importance
}

// usableTrials are the trials with a score and a full vector, each vector
// encoded (categoricals by index, inactive NaN) for binning.
func usableTrials(values [][]Value, scores []float64, space Space) ([][]float64, []float64) {
	var rows [][]float64
	var ys []float64
	for i, row := range values {
		if i >= len(scores) || len(row) != len(space) || math.IsNaN(scores[i]) {
			continue
		}
		rows = append(rows, space.Encode(row))
		ys = append(ys, scores[i])
	}
	return rows, ys
}

// averageRanks gives tied scores their mean rank (1-based).
func averageRanks(ys []float64) []float64 {
	order := make([]int, len(ys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ys[order[a]] < ys[order[b]] })
	ranks := make([]float64, len(ys))
	for start := 0; start < len(order); {
		end := start + 1
		for end < len(order) && ys[order[end]] == ys[order[start]] {
			end++
		}
		avg := float64(start+end+1) / 2 // mean of ranks start+1..end
		for k := start; k < end; k++ {
			ranks[order[k]] = avg
		}
		start = end
	}
	return ranks
}

// binWithInactive bins the active values with binOf and puts the
// inactive (NaN) ones in one more bin.
func binWithInactive(column []float64, p Param) []int {
	var active []float64
	var at []int
	for i, v := range column {
		if !math.IsNaN(v) {
			active, at = append(active, v), append(at, i)
		}
	}
	if len(active) == len(column) {
		return binOf(column, p)
	}
	bins := make([]int, len(column))
	last := 0
	if len(active) > 0 {
		for k, b := range binOf(active, p) {
			bins[at[k]] = b
			last = max(last, b+1)
		}
	}
	for i, v := range column {
		if math.IsNaN(v) {
			bins[i] = last
		}
	}
	return bins
}

// binOf assigns each trial a bin of parameter p. Equal values always share
// a bin.
func binOf(column []float64, p Param) []int {
	n := len(column)
	bins := int(math.Round(math.Sqrt(float64(n))))
	bins = min(max(bins, 2), maxImportanceBins)

	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return column[order[a]] < column[order[b]] })
	distinct := 1
	for k := 1; k < n; k++ {
		if column[order[k]] != column[order[k-1]] {
			distinct++
		}
	}
	byValue := p.Kind == Categorical || distinct <= bins

	assigned := make([]int, n)
	bin := 0
	for k, idx := range order {
		if k > 0 && column[idx] != column[order[k-1]] {
			// A new value starts a new bin when binning by value, or when
			// the current equal-count bin is full.
			if byValue || k >= (bin+1)*n/bins {
				bin++
			}
		}
		assigned[idx] = bin
	}
	return assigned
}

func epsilonSquared(bin []int, ranks []float64, mean, total float64) float64 {
	k := 0
	for _, b := range bin {
		k = max(k, b+1) // bins are numbered 0..k-1 without gaps
	}
	n := len(ranks)
	if k < 2 || n <= k {
		return 0
	}
	sums := make([]float64, k)
	counts := make([]int, k)
	for i, b := range bin {
		sums[b] += ranks[i]
		counts[b]++
	}
	between := 0.0
	for b, c := range counts {
		m := sums[b] / float64(c)
		between += float64(c) * (m - mean) * (m - mean)
	}
	within := total - between
	e := (between - float64(k-1)*within/float64(n-k)) / total
	return math.Max(e, 0)
}
