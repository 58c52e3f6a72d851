package workload

import "testing"

// The aggregate rate is the arrival rate while clients are active: two
// clients of fraction 1 in disjoint 10 s windows each arrive at the whole
// 20 req/s (about 200 requests in each window), where dividing by every
// client's fraction would give each 10 req/s (about 100). A third client
// without windows overlaps both, so while it runs each windowed client
// shares the rate with it.
func TestLifecycleClientsShareTheRateWithTheCoActive(t *testing.T) {
	const client = `
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 64}}
    output_distribution: {type: constant, params: {value: 8}}`
	doc := `version: "2"
aggregate_rate: 20
horizon: 50000000
clients:
  - id: a
    rate_fraction: 1` + client + `
    lifecycle: {windows: [{start_us: 5000000, end_us: 15000000}]}
  - id: b
    rate_fraction: 1` + client + `
    lifecycle: {windows: [{start_us: 30000000, end_us: 40000000}]}
`
	for _, seed := range []int64{42, 43, 44} {
		count := map[int32]int{}
		for _, r := range drain(mustGenerator(t, mustSpec(t, doc), Options{Seed: seed, BlockSize: 16}), 1000) {
			count[r.Client]++
		}
		if len(count) != 2 {
			t.Fatalf("seed %d: requests of %d clients; want 2", seed, len(count))
		}
		for c, n := range count {
			if n < 160 || n > 240 {
				t.Errorf("seed %d: client %d made %d requests in its 10 s window; want about 200 (20 req/s)", seed, c, n)
			}
		}
	}
	shares := rateShares(mustSpec(t, doc+`  - id: always
    rate_fraction: 2`+client+"\n").Clients)
	if shares[0] != 3 || shares[1] != 3 || shares[2] != 4 {
		t.Errorf("shares %v; want a and b over 1+2 (each overlaps the windowless client), the windowless over all, 4", shares)
	}
}
