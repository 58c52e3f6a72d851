package cli

import (
	"io/fs"
	"path"

	"optimize/simcore/latency"
	"optimize/templates"
)

// loadCatalog reads the embedded model profiles.
func loadCatalog() (*latency.Catalog, error) {
	var c latency.Catalog
	files, err := fs.Glob(templates.Models, "models/*.yaml")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := templates.Models.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if err := c.ParseProfiles("templates/"+path.Clean(f), data); err != nil {
			return nil, err
		}
	}
	return &c, nil
}
