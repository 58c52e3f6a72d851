package admit

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"optimize/simcore"
)

type arrival struct {
	at       simcore.Tick
	inputLen int32
	want     bool
}

func TestPolicies_DecideLikeBLIS(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		arrivals []arrival
	}{
		{"default is always-admit", Config{}, []arrival{{0, 1 << 30, true}, {0, 5, true}}},
		{"always-admit", Config{Policy: "always-admit"}, []arrival{{3, 100, true}}},
		{"reject-all", Config{Policy: "reject-all"}, []arrival{{0, 0, false}, {9, 1, false}}},
		{"bucket starts full and charges input tokens", Config{Policy: "token-bucket", BucketCapacity: 100, RefillRate: 1},
			[]arrival{{0, 60, true}, {0, 40, true}, {0, 1, false}}},
		{"exact fit is admitted", Config{Policy: "token-bucket", BucketCapacity: 10, RefillRate: 1}, []arrival{{0, 10, true}, {0, 0, true}}},
		{"rejection costs nothing", Config{Policy: "token-bucket", BucketCapacity: 10, RefillRate: 1},
			[]arrival{{0, 11, false}, {0, 10, true}}},
		{"refill is elapsed µs × rate / 1e6", Config{Policy: "token-bucket", BucketCapacity: 100, RefillRate: 1000},
			[]arrival{{0, 100, true}, {49_000, 50, false}, {50_000, 50, true}, {50_000, 1, false}}},
		{"refill is capped at capacity", Config{Policy: "token-bucket", BucketCapacity: 100, RefillRate: 1000},
			[]arrival{{0, 10, true}, {10_000_000, 101, false}, {10_000_000, 100, true}}},
		{"longer than capacity is never admitted", Config{Policy: "token-bucket", BucketCapacity: 100, RefillRate: 1e6},
			[]arrival{{0, 101, false}, {1 << 40, 101, false}}},
		{"fractional tokens accumulate", Config{Policy: "token-bucket", BucketCapacity: 2, RefillRate: 0.5},
			[]arrival{{0, 2, true}, {1_000_000, 1, false}, {2_000_000, 1, true}}},
		{"default bucket is 10000 tokens, 1000/s", Config{Policy: "token-bucket"},
			[]arrival{{0, 10000, true}, {1000, 1, true}, {1000, 1, false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range tc.arrivals {
				if got := p.Admit(&simcore.Request{InputLen: a.inputLen}, a.at, &Load{}); got != a.want {
					t.Fatalf("arrival %d (t=%d, %d tokens): admitted %v, want %v", i, a.at, a.inputLen, got, a.want)
				}
			}
		})
	}
}

// The refill clock must not move backwards on a stale or equal time, as in
// BLIS (elapsed ≤ 0 leaves the bucket alone).
func TestTokenBucket_IgnoresNonPositiveElapsed(t *testing.T) {
	b := newTokenBucket(10, 1e6)
	b.Admit(&simcore.Request{InputLen: 10}, 5, nil)
	b.Admit(&simcore.Request{InputLen: 0}, 3, nil)
	if b.lastRefill != 5 || b.tokens != 0 {
		t.Fatalf("lastRefill %d, tokens %v; want 5, 0", b.lastRefill, b.tokens)
	}
}

func TestNew_RejectsBadConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"unknown policy", Config{Policy: "slo-gate"}, `admission.policy: unknown value "slo-gate" (allowed: always-admit, token-bucket, reject-all, slo-gated, probabilistic)`},
		{"negative capacity", Config{Policy: "token-bucket", BucketCapacity: -1}, "admission.token_bucket.capacity: must be a finite number > 0, got -1"},
		{"NaN capacity", Config{Policy: "token-bucket", BucketCapacity: math.NaN()}, "admission.token_bucket.capacity: must be a finite number > 0, got NaN"},
		{"infinite capacity", Config{Policy: "token-bucket", BucketCapacity: math.Inf(1)}, "got +Inf"},
		{"negative rate", Config{Policy: "token-bucket", RefillRate: -5}, "admission.token_bucket.refill_rate: must be a finite number > 0 tokens/s, got -5"},
		{"infinite rate", Config{Policy: "token-bucket", RefillRate: math.Inf(1)}, "admission.token_bucket.refill_rate: must be"},
		{"bucket checked for other policies too", Config{Policy: "always-admit", RefillRate: math.NaN()}, "admission.token_bucket.refill_rate: must be"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.cfg, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
			if p != nil || strings.Contains(err.Error(), "\n") {
				t.Fatalf("want nil policy and a one-line error, got %v, %q", p, err)
			}
		})
	}
}

func TestPolicyNames_DefaultFirst(t *testing.T) {
	if got := PolicyNames(); !reflect.DeepEqual(got, []string{"always-admit", "token-bucket", "reject-all", "slo-gated", "probabilistic"}) {
		t.Fatalf("PolicyNames = %v", got)
	}
}

func TestAdmit_DoesNotAllocate(t *testing.T) {
	p, err := New(Config{Policy: "token-bucket"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &simcore.Request{InputLen: 3}
	now := simcore.Tick(0)
	var load Load
	if allocs := testing.AllocsPerRun(1000, func() { now += 7; p.Admit(r, now, &load) }); allocs != 0 {
		t.Fatalf("Admit allocates %v times per call", allocs)
	}
}
