package strategies

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"optimize/simcore/errtext"
	"optimize/templates"
)

// Registry holds loaded templates, sorted by name. Build it with Builtin
// and extend it with AddDir; nothing registers itself.
type Registry struct {
	templates []*Template
}

// sourceFile is one template file and the name errors call it by.
type sourceFile struct {
	label string
	data  []byte
}

// Builtin loads the embedded templates (templates/strategies/*.yaml).
func Builtin() (*Registry, error) {
	names, err := fs.Glob(templates.Strategies, "strategies/*.yaml")
	if err != nil {
		return nil, err
	}
	files := make([]sourceFile, 0, len(names))
	for _, name := range names {
		data, err := templates.Strategies.ReadFile(name)
		if err != nil {
			return nil, err
		}
		files = append(files, sourceFile{label: path.Join("templates", name), data: data})
	}
	r := &Registry{}
	if err := r.add(files); err != nil {
		return nil, err
	}
	return r, nil
}

// AddDir loads the user templates in dir (*.yaml, not recursive). They may
// use built-ins as bases; a name already registered is an error. On error
// the registry is unchanged.
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
		if err != nil {
			return fmt.Errorf("%s: %v", label, err)
		}
		files = append(files, sourceFile{label: label, data: data})
	}
	if len(files) == 0 {
		return fmt.Errorf("--templates-dir %s: no *.yaml template files", dir)
	}
	return r.add(files)
}

// add parses and resolves a batch of files together (so that they may
// name each other as bases) and registers them only if all are valid.
func (r *Registry) add(files []sourceFile) error {
	raws := make([]*rawTemplate, 0, len(files))
	for _, f := range files {
		raw, err := parseTemplate(f.label, f.data)
		if err != nil {
			return err
		}
		if err := r.checkName(raw, raws); err != nil {
			return err
		}
		raws = append(raws, raw)
	}
	slices.SortFunc(raws, func(a, b *rawTemplate) int { return strings.Compare(a.name, b.name) })
	res := &resolver{known: r.templates, raws: raws}
	for _, raw := range raws {
		if _, err := res.get(raw.name); err != nil {
			return err
		}
	}
	all := slices.Concat(r.templates, res.done)
	slices.SortFunc(all, func(a, b *Template) int { return strings.Compare(a.Name, b.Name) })
	r.templates = all
	return nil
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

// Get returns the template called name.
func (r *Registry) Get(name string) (*Template, error) {
	i, ok := slices.BinarySearchFunc(r.templates, name, func(t *Template, n string) int { return strings.Compare(t.Name, n) })
	if !ok {
		return nil, fmt.Errorf("unknown template %q (available: %s)", name, strings.Join(r.Names(), ", "))
	}
	return r.templates[i], nil
}

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
