package strategies

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"optimize/data"
	"optimize/simcore/errtext"
)

// Registry holds loaded templates, sorted by name. Build it with Builtin
// and extend it with AddDir; nothing registers itself.
type Registry struct {
	templates []*Template
	broken    []BrokenTemplate // user files that did not load, by file
}

// BrokenTemplate is a user template file that did not load: the name it
// is asked for by (its file name without .yaml) and why, one line naming
// the file and the field. The other templates load without it.
type BrokenTemplate struct {
	Name string
	File string
	Err  error
}

// sourceFile is one template file and the name errors call it by (err:
// it could not be read).
type sourceFile struct {
	label string
	data  []byte
	err   error
}

// Builtin loads the embedded templates (data/strategies/*.yaml).
func Builtin() (*Registry, error) {
	names, err := fs.Glob(data.Strategies, "strategies/*.yaml")
	if err != nil {
		return nil, err
	}
	files := make([]sourceFile, 0, len(names))
	for _, name := range names {
		data, err := data.Strategies.ReadFile(name)
		if err != nil {
			return nil, err
		}
		files = append(files, sourceFile{label: path.Join("data", name), data: data})
	}
	r := &Registry{}
	// A built-in that does not load is this program's bug: nothing runs.
	if broken := r.add(files); len(broken) > 0 {
		return nil, broken[0].Err
	}
	return r, nil
}

// AddDir loads the user templates in dir (*.yaml, not recursive). They may
// use built-ins and each other as bases; a name already registered is an
// error. A file that does not load (nor one built on it) is set aside as
// broken (Broken lists it, Get of its name returns its error) and the
// others load: one mistake does not stop work with the other templates.
// Only a directory that cannot be read or holds no *.yaml is an error,
// and then the registry is unchanged.
func (r *Registry) AddDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("--templates-dir: %v", err)
	}
	var files []sourceFile
	for _, e := range entries { // ReadDir sorts by name
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		label := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(label)
		files = append(files, sourceFile{label: label, data: data, err: err})
	}
	if len(files) == 0 {
		return fmt.Errorf("--templates-dir %s: no *.yaml template files", dir)
	}
	r.broken = append(r.broken, r.add(files)...)
	slices.SortFunc(r.broken, func(a, b BrokenTemplate) int { return strings.Compare(a.File, b.File) })
	return nil
}

// add parses and resolves a batch of files together (so that they may
// name each other as bases), registers the valid ones and returns the
// others, in file order.
func (r *Registry) add(files []sourceFile) []BrokenTemplate {
	var broken []BrokenTemplate
	setAside := func(file string, err error) {
		broken = append(broken, BrokenTemplate{Name: nameFromFile(file), File: file, Err: err})
	}
	raws := make([]*rawTemplate, 0, len(files))
	for _, f := range files {
		if f.err != nil {
			setAside(f.label, fmt.Errorf("%s: %v", f.label, f.err))
			continue
		}
		raw, err := parseTemplate(f.label, f.data)
		if err == nil {
			err = r.checkName(raw, raws)
		}
		if err != nil {
			setAside(f.label, err)
			continue
		}
		raws = append(raws, raw)
	}
	slices.SortFunc(raws, func(a, b *rawTemplate) int { return strings.Compare(a.name, b.name) })
	res := &resolver{known: r.templates, raws: raws, failed: map[string]error{}, unread: map[string]string{}}
	for _, b := range broken {
		res.unread[b.Name] = b.File
	}
	for _, raw := range raws {
		if _, err := res.get(raw.name); err != nil {
			setAside(raw.file, err)
		}
	}
	all := slices.Concat(r.templates, res.done)
	slices.SortFunc(all, func(a, b *Template) int { return strings.Compare(a.Name, b.Name) })
	r.templates = all
	slices.SortFunc(broken, func(a, b BrokenTemplate) int { return strings.Compare(a.File, b.File) })
	return broken
}

// checkName enforces a lower-kebab-case name equal to the file's base name
// (so users find a template's file by its name) and unique in the registry.
func (r *Registry) checkName(raw *rawTemplate, batch []*rawTemplate) error {
	switch want := nameFromFile(raw.file); {
	case raw.name == "":
		return errtext.New(raw.file, "name", "required (the file name without .yaml: %q)", want)
	case !templateNamePattern.MatchString(raw.name):
		return errtext.New(raw.file, "name", "%q must be lower-kebab-case (letters, digits, -)", raw.name)
	case raw.name != want:
		return errtext.New(raw.file, "name", "%q must match the file name %q", raw.name, want)
	}
	for _, t := range r.templates {
		if t.Name == raw.name {
			return errtext.New(raw.file, "name", "%q clashes with the template of that name in %s; rename it", raw.name, t.File)
		}
	}
	for _, b := range batch {
		if b.name == raw.name {
			return errtext.New(raw.file, "name", "%q is also defined in %s", raw.name, b.file)
		}
	}
	return nil
}

// Get returns the template called name; for a broken file of that name,
// its error.
func (r *Registry) Get(name string) (*Template, error) {
	i, ok := slices.BinarySearchFunc(r.templates, name, func(t *Template, n string) int { return strings.Compare(t.Name, n) })
	if ok {
		return r.templates[i], nil
	}
	for _, b := range r.broken {
		if b.Name == name {
			return nil, b.Err
		}
	}
	return nil, fmt.Errorf("unknown template %s (available: %s)", errtext.Quote(name), strings.Join(r.Names(), ", "))
}

// Broken lists the user template files that did not load, by file.
func (r *Registry) Broken() []BrokenTemplate { return slices.Clone(r.broken) }

// Names lists the templates, sorted.
func (r *Registry) Names() []string {
	names := make([]string, len(r.templates))
	for i, t := range r.templates {
		names[i] = t.Name
	}
	return names
}

// Templates returns the templates, sorted by name.
func (r *Registry) Templates() []*Template { return slices.Clone(r.templates) }
