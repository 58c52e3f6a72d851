package cli

import (
	"github.com/spf13/pflag"

	"optimize/studies"
)

// bindLimits adds the flags that raise the given limits (all of them when
// none is named), each from studies' one table, into l.
func bindLimits(fs *pflag.FlagSet, l *studies.Limits, which ...studies.Limit) {
	*l = studies.DefaultLimits()
	if len(which) == 0 {
		which = studies.AllLimits()
	}
	for _, k := range which {
		fs.Int64Var(&l[k], k.Flag(), k.Default(), k.Usage())
	}
}
