package studies

// hypervolumeSoFar is filled in by the history work; until then, none.
func (r *Report) hypervolumeSoFar() []float64 { return nil }
