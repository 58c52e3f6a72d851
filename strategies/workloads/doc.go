// Package workloads is what a study or a simulation runs on: the built-in
// workload specs (builtin_workloads.go reads data/workloads), the
// regimes that move a workload and its cluster to another operating point
// (regimes.go), replayed traces (traces.go) and a trace's split into the
// windows a study tunes on and the windows it holds out (tracesplit.go),
// and the names a workload is given by (Resolve, ParseRef).
package workloads
