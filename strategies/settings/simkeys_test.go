package settings

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every key the simulator can name in an error is a constant of package
// simcore/keys that the settings table declares (a setting, or the prefix
// of a family of settings), and no simulator error names a key by a
// string literal: a key the table lacks, or a typo, fails here.
func TestSimulatorKeysAreTableKeys(t *testing.T) {
	fset := token.NewFileSet()
	file, err := goparser.ParseFile(fset, filepath.Join("..", "..", "simcore", "keys", "keys.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	constants := 0
	for _, decl := range file.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				key, err := strconv.Unquote(v.(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				constants++
				if _, ok := Lookup(key); ok || familyOf(key) {
					continue
				}
				t.Errorf("simcore/keys names %q, which is neither a setting nor a family of settings in the table", key)
			}
		}
	}
	if constants < 40 {
		t.Fatalf("read %d constants from simcore/keys", constants)
	}
	root := filepath.Join("..", "..", "simcore")
	calls := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := goparser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "BadSetting" || len(call.Args) == 0 {
				return true
			}
			calls++
			ast.Inspect(call.Args[0], func(m ast.Node) bool {
				if lit, ok := m.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					t.Errorf("%s: BadSetting names a key by the literal %s: use a simcore/keys constant", fset.Position(lit.Pos()), lit.Value)
				}
				return true
			})
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 30 {
		t.Fatalf("found %d BadSetting calls under simcore", calls)
	}
}

// familyOf reports whether some setting's key is prefix.MEMBER.
func familyOf(prefix string) bool {
	for _, s := range All() {
		if strings.HasPrefix(s.Key, prefix+".") {
			return true
		}
	}
	return false
}
