package strategies

import (
	"io/fs"
	"strings"
	"testing"

	"optimize/data"
)

// FuzzLoadTemplate: any file is either loaded or rejected with a one-line
// error naming it; loading never panics, and a loaded template's defaults
// build a configuration.
func FuzzLoadTemplate(f *testing.F) {
	files, _ := fs.Glob(data.Strategies, "strategies/*.yaml")
	for _, name := range files {
		data, _ := data.Strategies.ReadFile(name)
		f.Add(strings.Replace(string(data), "name: "+nameFromFile(name), "name: t", 1))
	}
	f.Add(validTemplate)
	f.Add("name: t\ndescription: d\nbase: t\n")
	f.Add("a: &a [*a, *a]\n")
	f.Add("name: t\ndescription: d\nparameters: [{name: x, type: int, low: 1e308, high: 1.7e308, default: 1e308, knob: num_instances}]\n")
	f.Add("name: t\ndescription: d\nmechanism: {routing.weight.queue-depth: .nan}\n")
	builtins := builtin(f)
	base := profileBase(f)
	f.Fuzz(func(t *testing.T, body string) {
		r := &Registry{templates: builtins.Templates()}
		err := loadErr(r.add([]sourceFile{{label: "fuzz/t.yaml", data: []byte(body)}}))
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "fuzz/t.yaml") || strings.Contains(msg, "\n") {
				t.Fatalf("error not one line naming the file: %q", msg)
			}
			return
		}
		tpl, err := r.Get("t")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tpl.Config(base, tpl.Defaults()); err != nil {
			t.Fatalf("loaded, but its defaults fail: %v", err)
		}
	})
}
