package testkit

import (
	"testing"

	"optimize/simcore/cluster"
	"optimize/strategies"
)

// Builtins are the built-in templates and the standard cluster.
func Builtins(t testing.TB) (*strategies.Registry, cluster.Config) {
	t.Helper()
	reg, err := strategies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	std, err := strategies.Standard()
	if err != nil {
		t.Fatal(err)
	}
	return reg, std
}
