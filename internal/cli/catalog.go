package cli

import "optimize/simcore/latency"

// loadCatalog reads the embedded model profiles.
func loadCatalog() (*latency.Catalog, error) { return latency.Builtin() }
