package workload

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"optimize/simcore/errtext"
)

// Library is a folder of named workload specs, NAME.yaml in Dir of FS.
// The simulator ships no workloads: its caller hands it the folder (the
// binary's built-ins, or one on disk).
type Library struct {
	FS  fs.FS
	Dir string
}

// Spec returns the spec called name (its file name without ".yaml").
func (l Library) Spec(name string) (*Spec, error) {
	var data []byte
	err := fs.ErrNotExist
	if name != "" && !strings.ContainsAny(name, `/\`) {
		data, err = fs.ReadFile(l.FS, path.Join(l.Dir, name+".yaml"))
	}
	if err != nil {
		return nil, fmt.Errorf("unknown built-in workload %s (available: %s)", errtext.Quote(name), strings.Join(l.Names(), ", "))
	}
	return ParseSpec(name+".yaml", data)
}

// Names lists the library's workloads, sorted.
func (l Library) Names() []string {
	entries, err := fs.ReadDir(l.FS, l.Dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok && !e.IsDir() {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
