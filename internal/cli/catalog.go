package cli

import (
	"optimize/simcore/latency"
	"optimize/strategies"
)

// loadCatalog reads the built-in model profiles.
func loadCatalog() (*latency.Catalog, error) { return strategies.ModelCatalog() }
