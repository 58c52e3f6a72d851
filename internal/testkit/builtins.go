package testkit

import (
	"testing"

	"optimize/simcore/cluster"
	"optimize/strategies"
	"optimize/strategies/settings"
)

// Builtins are the built-in templates and the standard cluster.
func Builtins(t testing.TB) (*strategies.Registry, cluster.Config) {
	t.Helper()
	reg, err := strategies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	std, err := settings.Standard()
	if err != nil {
		t.Fatal(err)
	}
	return reg, std
}
