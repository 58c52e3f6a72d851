package settings

// Carries reports whether production has a counterpart for value of s —
// exact, approximated or the world — as the production column declares
// it without a configuration: the counterpart of the value where Values
// lists it, else the setting's; a scorer's weight of 0 carries exactly
// (no plugin). What only a configuration decides (a number production
// cannot hold, a unit it cannot convert) is production.Carry's.
func (s *Setting) Carries(value string) bool {
	if s.family == Scorers && value == "0" {
		return true
	}
	f := s.Production.Fidelity
	for _, v := range s.Production.Values {
		if v.Value == value {
			f = v.Fidelity
			break
		}
	}
	return f != NoCounterpart
}
