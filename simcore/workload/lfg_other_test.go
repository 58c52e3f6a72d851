//go:build !amd64

package workload

func addMaskedLoops() []addMaskedLoop { return []addMaskedLoop{{"Go", addMasked}} }
