package settings

// Family is how a setting and its siblings are written: a setting on its
// own has its own flag; the members of a family share one list-valued
// flag, one element per member (Setting.Item names the member), and keys
// FAMILY.MEMBER. It is a column of the settings table: the command line,
// the settings file, the usage texts and BLIS's flag notes read it here
// instead of working it out from key prefixes.
type Family int

const (
	// Single: one setting, one flag (--scheduler V).
	Single Family = iota
	// PerClass: one member per SLO class, written class=V,…
	// (--slo-base critical=10,standard=5).
	PerClass
	// Scorers: the weighted profile's scorers, written name:W,… in the
	// profile's order, which fixes the float sums and hence ties
	// (--routing-scorers prefix-affinity:3,queue-depth:2).
	Scorers
	// Vector: positional members, written i0,i1,i2 (--alpha-coeffs a,b,c).
	Vector
	// Named: one member per name, written name=V,… (a price per GPU:
	// --gpu-hour-price H100=2.5).
	Named
)

// Word is what a member is called in keys and usage texts: "class",
// "scorer", "i" (an index), "GPU"; "" for a Single setting.
func (f Family) Word() string {
	switch f {
	case PerClass:
		return "class"
	case Scorers:
		return "scorer"
	case Vector:
		return "i"
	case Named:
		return "GPU"
	}
	return ""
}

// element is how one member is written in its flag's list: "ITEM=V",
// "ITEM:W" or "[ITEM]".
func (f Family) element(item string) string {
	switch f {
	case Scorers:
		return item + ":W"
	case Vector:
		return "[" + item + "]"
	}
	return item + "=V"
}

// Family is the family a setting belongs to (its Item's kind).
func (s *Setting) Family() Family { return s.family }
