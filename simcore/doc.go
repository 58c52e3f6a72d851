// Package simcore is the simulator's base: the value types every part of
// it shares and the pieces of one instance that need no policy. It holds
// the request (Request, its SLO class and per-class settings, the Source a
// workload is pulled from), the wait queue with its ranking and the pool
// that folds waiting requests into flat records, the chained block hashes
// of prompt contents, the injected RNG streams (SubsystemRNG: one per
// subsystem and seed, never the global one) and the BLIS era a run follows.
//
// The event loop is not here: it is simcore/cluster's Engine (New, Run),
// which assembles each instance from the packages beneath simcore (kv,
// batch, sched, latency) with the cluster's admission (admit) and routing
// (route), and replays a workload Source (workload) on one goroutine with
// one shared clock. simcore imports nothing of this module outside it
// (deps_test.go).
package simcore
