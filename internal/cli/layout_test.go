package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// layoutRows reads the README's Layout table: each row's paths (the
// backticked names of its first cell), in the table's order.
func layoutRows(t *testing.T, root string) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no Layout section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	name := regexp.MustCompile("`([^`]+)`")
	var rows [][]string
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.Contains(cells[1], "`") {
			continue
		}
		var paths []string
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			paths = append(paths, strings.TrimSuffix(m[1], "/"))
		}
		rows = append(rows, paths)
	}
	if len(rows) < 5 {
		t.Fatalf("the Layout table has %d rows", len(rows))
	}
	return rows
}

// The README's Layout cannot drift from the code: every package of the
// module has its row (the longest row path it lies under), every path a
// row names exists, and no package imports a package of a row above its
// own, as the Layout says.
func TestReadmeLayout(t *testing.T) {
	root := repoRoot(t)
	rows := layoutRows(t, root)
	for _, row := range rows {
		for _, p := range row {
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("Layout names %s, which does not exist", p)
			}
		}
	}
	rowOf := func(dir string) int {
		best, bestLen := -1, -1
		for i, row := range rows {
			for _, p := range row {
				if (dir == p || strings.HasPrefix(dir, p+"/")) && len(p) > bestLen {
					best, bestLen = i, len(p)
				}
			}
		}
		return best
	}
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "optimize/"
	dec := json.NewDecoder(strings.NewReader(string(out)))
	packages := 0
	for dec.More() {
		var pkg struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&pkg); err != nil {
			t.Fatal(err)
		}
		packages++
		dir := strings.TrimPrefix(pkg.ImportPath, module)
		own := rowOf(dir)
		if own < 0 {
			t.Errorf("package %s has no row in the README's Layout", dir)
			continue
		}
		for _, imp := range pkg.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if r := rowOf(dep); r < own {
				t.Errorf("%s (Layout row %d) imports %s (row %d, above it): reorder the Layout or the imports", dir, own+1, dep, r+1)
			}
		}
	}
	if packages < 20 {
		t.Fatalf("go list named %d packages", packages)
	}
}
