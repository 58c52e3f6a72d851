package route

import (
	"optimize/simcore"
)

// The llm-d-style scorers: token-load and session-affinity.

// DefaultTokenLoadThreshold is the token-load scorer's threshold when none
// is configured: 131,072 in-flight tokens per instance, 128 requests of
// 1,024 tokens, where llm-d's default is 128 requests of 32,768. This
// project's requests are about 900 tokens (orthogonal-slo: 890 input +
// output tokens on average, 1,376 at P99). On orthogonal-slo with the
// baseline routing (8 instances, seeds 42-44) an instance has 55K tokens
// in flight on average when a request is routed, 108K at P99 and 111K at
// most: below the threshold, so the score ranks instances over the whole
// run instead of reading 0 on the busiest ones.
const DefaultTokenLoadThreshold = 131_072

// TokenLoadThresholdInEffect is the token-load threshold the scorer uses:
// the configured one, or the default for 0.
func (c *Config) TokenLoadThresholdInEffect() int64 {
	if c.TokenLoadThreshold == 0 {
		return DefaultTokenLoadThreshold
	}
	return c.TokenLoadThreshold
}

// tokenLoad scores an instance by the tokens it has in flight rather than
// by the number of requests, as llm-d's token-load scorer does:
// 1 − min(1, InFlightTokens / threshold), where InFlightTokens counts the
// input and output tokens of every request routed to the instance and not
// yet completed or dropped. An idle instance scores 1, one at or above the
// threshold 0. Unlike queue-depth it is absolute, not normalised over the
// instances: two instances at 10 and 11 tokens score almost the same.
type tokenLoad struct{ threshold float64 }

func newTokenLoad(cfg *Config) tokenLoad {
	return tokenLoad{threshold: float64(cfg.TokenLoadThresholdInEffect())}
}

func (t tokenLoad) Score(_ *simcore.Request, snaps []Snapshot, out []float64) {
	for i := range snaps {
		out[i] = 1 - min(1, float64(snaps[i].InFlightTokens)/t.threshold)
	}
}

// SessionAffinityCapacity is how many sessions the session-affinity record
// remembers: 65,536, the sessions most recently routed. A session routed
// less recently than 65,536 others is forgotten, and its next round is
// scored as a first round (all instances 0) and remembered again wherever
// the other scorers send it. The record grows as sessions come, up to
// this bound.
const SessionAffinityCapacity = 1 << 16

// sessionAffinity sends a multi-turn session's later rounds where its
// earlier ones went: on a request of a session routed before, the instance
// that served the session's latest routed round scores 1 and the others 0
// (that instance's cache holds the session's whole context so far); on a
// session's first round, and on a request of no session, all score 0 and
// the other scorers decide. A session is a request's Session id (-1 for a
// single request, which is never pinned): its rounds share one id whether
// or not their token streams (Content.UID) are the same.
type sessionAffinity struct{ record sessionRecord }

func newSessionAffinity(capacity int) *sessionAffinity {
	return &sessionAffinity{record: newSessionRecord(capacity)}
}

func (s *sessionAffinity) Score(r *simcore.Request, _ []Snapshot, out []float64) {
	clear(out)
	if inst, ok := s.record.instanceOf(r.Session); ok && int(inst) < len(out) {
		out[inst] = 1
	}
}

// Observe remembers the chosen instance for r's session.
func (s *sessionAffinity) Observe(r *simcore.Request, chosen int) {
	s.record.remember(r.Session, int32(chosen))
}

// sessionRecord maps session ids to the instance of their latest routed
// round, for the capacity sessions routed most recently: a keyLRU of
// session keys, and the instance of each entry.
type sessionRecord struct {
	lru      keyLRU
	instance []int32 // by entry of lru
}

func newSessionRecord(capacity int) sessionRecord {
	return sessionRecord{lru: newKeyLRU(capacity)}
}

// sessionKey is the map key of session id s (keys must not be 0); false
// for a request of no session.
func sessionKey(s int32) (uint64, bool) { return uint64(s) + 1, s >= 0 }

// instanceOf returns the instance remembered for session s.
func (x *sessionRecord) instanceOf(s int32) (int32, bool) {
	key, ok := sessionKey(s)
	if !ok {
		return 0, false
	}
	e, ok := x.lru.find(key)
	if !ok {
		return 0, false
	}
	return x.instance[e], true
}

// remember records inst for session s and makes it the most recent.
func (x *sessionRecord) remember(s int32, inst int32) {
	key, ok := sessionKey(s)
	if !ok {
		return
	}
	e := x.lru.touch(key)
	if int(e) == len(x.instance) {
		x.instance = append(x.instance, inst)
	} else {
		x.instance[e] = inst
	}
}
