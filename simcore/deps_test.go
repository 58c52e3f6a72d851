package simcore

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The simulator depends on nothing above it: no package under simcore,
// nor its tests, imports a package of the module outside simcore (the
// embedded templates, internal/..., strategies). Built-in workloads and
// model profiles reach it from its caller. Checking every package's
// direct imports covers the transitive ones: a package outside the module
// cannot import the module.
func TestSimcoreImportsNothingAbove(t *testing.T) {
	const module, core = "optimize", "optimize/simcore"
	checked := 0
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); dir != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(dir, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return err
		}
		checked++
		for _, imp := range slices.Concat(pkg.Imports, pkg.TestImports, pkg.XTestImports) {
			inModule := imp == module || strings.HasPrefix(imp, module+"/")
			if inModule && imp != core && !strings.HasPrefix(imp, core+"/") {
				t.Errorf("simcore/%s imports %s: the simulator may import only simcore packages of this module",
					filepath.ToSlash(dir), imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked %d packages, want every simcore package (more than 10)", checked)
	}
}
