//go:build quality

package studies_test

import (
	"fmt"
	"strings"
	"testing"

	"optimize/internal/testkit/studykit"
)

// This file holds the long search-quality study. It is built only with the
// quality tag, so `make test` neither runs nor lists it; `make bench` runs
// it:
//
//	go test -tags quality ./studies -run '^TestTPEAgainstRandom$' -count=1 -v -timeout 60m

// qualityTemplates are the templates the study searches: slo-cascade (seven
// scheduling and routing parameters on orthogonal-slo) and kv-heavy (three
// routing weights on the KV-pressure workload: over 40 random trials its
// score spans 0.97-1.10 of the baseline's critical TTFT P99, mostly
// through the prefix-affinity weight). kv-pressure's own parameters, the
// transfer scale and thrash weight, barely change its routing (see
// TestTieredKVAndPressureRouting in internal/cli), so it is not searched.
var qualityTemplates = []string{"slo-cascade", "kv-heavy"}

const (
	qualitySeeds  = 10 // study (sampler) seeds 1..qualitySeeds
	qualityTrials = 40
)

// bestScore runs a study of a template to its total and returns its best
// score (the primary objective relative to the baseline plus constraint
// penalties; lower is better).
func bestScore(t testing.TB, template, sampler string, seed int64, trials int) float64 {
	r := runTemplateStudy(t, studykit.TempEnv(t, 1), template, sampler, seed, trials)
	return r.Complete[r.Best].Score
}

// qualityRow is one template's result over the study seeds.
type qualityRow struct {
	template          string
	meanTPE, meanRand float64
	wins, losses, n   int
}

// TestTPEAgainstRandom compares TPE with random search: for each template
// and study seed 1-10, the best score after 40 trials of each sampler. It
// logs every pair and a table per template: each sampler's mean best and
// how often TPE's best is strictly lower.
//
// It asserts only what the measurements support: TPE's mean best is at
// most 0.01 (a percentage point of the baseline) above random's. Not that
// TPE wins most studies: on slo-cascade it wins 8 of 10 by 0.02-2.5
// points and loses 2 by 0.15 and 0.9; on kv-heavy it wins 3, loses 3 and
// ties 4 (TPE's 5 startup trials are random's first 5, in 3 seeds the best
// of 40 is among them, and the score is piecewise constant in the weights:
// different weights often route identically); and one simulator change
// can reshuffle such margins. The bound still catches a TPE that stops
// learning after its startup trials: random's best of its first 5 trials
// averages 0.4031 on slo-cascade and 1.0016 on kv-heavy, 9 and 1.7 points
// above its best of 40.
func TestTPEAgainstRandom(t *testing.T) {
	var rows []qualityRow
	for _, tpl := range qualityTemplates {
		row := qualityRow{template: tpl, n: qualitySeeds}
		for seed := int64(1); seed <= qualitySeeds; seed++ {
			tpe := bestScore(t, tpl, "tpe", seed, qualityTrials)
			rnd := bestScore(t, tpl, "random", seed, qualityTrials)
			row.meanTPE += tpe / qualitySeeds
			row.meanRand += rnd / qualitySeeds
			winner := "tie"
			switch {
			case tpe < rnd:
				row.wins++
				winner = "TPE"
			case tpe > rnd:
				row.losses++
				winner = "random"
			}
			t.Logf("%s, study seed %2d: best score TPE %.4f, random %.4f, %s", tpl, seed, tpe, rnd, winner)
		}
		rows = append(rows, row)
	}
	t.Logf("%d trials per study, study seeds 1-%d, simulation seeds 42-44; best score, lower is better\n%s",
		qualityTrials, qualitySeeds, qualityTable(rows))
	for _, r := range rows {
		if r.meanTPE > r.meanRand+0.01 {
			t.Errorf("%s: TPE's mean best %.4f is more than 0.01 above random's %.4f", r.template, r.meanTPE, r.meanRand)
		}
	}
}

// qualityTable renders the rows as a Markdown table.
func qualityTable(rows []qualityRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| template | mean best TPE | mean best random | TPE wins /%d |\n|---|---:|---:|---:|\n", qualitySeeds)
	for _, r := range rows {
		note := ""
		if ties := r.n - r.wins - r.losses; ties > 0 {
			note = fmt.Sprintf(" (random %d, %d ties)", r.losses, ties)
		}
		fmt.Fprintf(&b, "| %s | %.4f | %.4f | %d%s |\n", r.template, r.meanTPE, r.meanRand, r.wins, note)
	}
	return b.String()
}
