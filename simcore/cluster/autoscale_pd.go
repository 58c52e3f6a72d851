package cluster

import (
	"fmt"

	"optimize/simcore/metrics"
)

// The autoscaler with prefill/decode pools. llm-d deploys each pool role
// (prefill, decode; a pod serving both is a role of its own) as a
// Deployment, and its workload-variant-autoscaler gives each Deployment
// its own saturation decision and the HPA its own minReplicas and
// maxReplicas: here each pool role is a scale target, analyzed over its
// own routable instances (autoscale_analyze.go), held by its own windows,
// bounded by autoscaler.min_replicas and autoscaler.max_replicas each; a
// scale-up adds an instance of that role at that role's TP (its latency
// model, its KV capacity, its GPUs on the node pools) and a scale-down
// drains within the role. Instances in no pool are a target too, which
// only ever drains to its minimum. Under BLIS's behaviour
// (Config.BLISDegenerate) there is one target, as in BLIS f90a1e3a: an
// added instance is in no pool (it serves no P/D traffic but counts as
// supply), the drain takes the smallest names whatever their role (the
// only prefill instance may go: every later request is rejected at its
// prefill's routing), and a request whose decode instance was drained
// before its transfer ends is dropped.

// targetOf returns initial instance i's scale target, adding it.
func (s *scaler) targetOf(c *Config, i int) uint8 {
	role, tp := uint8(0), s.tp
	if s.pd != nil && !s.blis {
		role, tp = s.pd.roles[i], max(c.PD.tpOf(s.pd.roles[i], c.TP), 1)
	}
	for t, tg := range s.targets {
		if tg.role == role {
			return uint8(t)
		}
	}
	s.targets = append(s.targets, target{role: role, tp: tp})
	return uint8(len(s.targets) - 1)
}

func (s *scaler) tpOf(t uint8) int { return s.targets[t].tp }

// addedName is the name of the instance a scale-up adds: BLIS's
// autoscale-<model>-<seq>, with the pool role before the sequence number
// when each role is a target.
func (s *scaler) addedName(role uint8) string {
	if s.pd == nil || s.blis {
		return fmt.Sprintf("autoscale-%s-%06d", s.model, s.seq)
	}
	return fmt.Sprintf("autoscale-%s-%s-%06d", s.model, roleLabel(role), s.seq)
}

// gone reports whether instance i was drained under BLIS's behaviour, in
// which a transfer to a decode instance no longer routable is dropped.
func (s *scaler) gone(i int) bool {
	return s != nil && s.blis && s.lives[i].state != stateActive
}

// roleName is a pool role as the summary names it: prefill, decode,
// prefill-decode (both), "" (none).
func roleName(role uint8) string {
	switch role {
	case rolePrefill:
		return "prefill"
	case roleDecode:
		return "decode"
	case rolePrefill | roleDecode:
		return "prefill-decode"
	}
	return ""
}

func roleLabel(role uint8) string {
	if n := roleName(role); n != "" {
		return n
	}
	return "none"
}

// roleRows are the summary's per-role rows, in role order (prefill,
// decode, prefill-decode, none), for the roles present; nil without P/D.
func (s *scaler) roleRows() []metrics.RoleScale {
	if s.pd == nil {
		return nil
	}
	var rows []metrics.RoleScale
	for _, role := range []uint8{rolePrefill, roleDecode, rolePrefill | roleDecode, 0} {
		for _, r := range s.pd.roles {
			if r == role {
				rows = append(rows, metrics.RoleScale{Role: roleLabel(role)})
				break
			}
		}
	}
	return rows
}

// countRole adds instance life l, of pool role role, to its row: added,
// drained, GPU-µs (us).
func (s *scaler) countRole(rows []metrics.RoleScale, role uint8, l life, us float64) {
	for k := range rows {
		if rows[k].Role != roleLabel(role) {
			continue
		}
		if l.added {
			rows[k].ScaleUps++
		}
		if l.state == stateDraining || l.state == stateTerminated {
			rows[k].ScaleDowns++
		}
		rows[k].GPUHours += us / 3.6e9
	}
}
