package workload

// addMaskedLoops lists the vector loops this CPU can run.
func addMaskedLoops() []addMaskedLoop {
	loops := []addMaskedLoop{{"SSE2", addMaskedSSE2}}
	if hasAVX2 {
		loops = append(loops, addMaskedLoop{"AVX2", addMaskedAVX2})
	}
	return loops
}
