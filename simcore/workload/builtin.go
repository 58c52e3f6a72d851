package workload

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"optimize/templates"
)

// Builtin returns the built-in workload spec called name (the file name in
// templates/workloads without ".yaml").
func Builtin(name string) (*Spec, error) {
	file := path.Join("workloads", name+".yaml")
	data, err := fs.ReadFile(templates.Workloads, file)
	if err != nil || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("unknown built-in workload %q (available: %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	return ParseSpec(name+".yaml", data)
}

// BuiltinNames lists the built-in workloads, sorted.
func BuiltinNames() []string {
	entries, err := fs.ReadDir(templates.Workloads, "workloads")
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
