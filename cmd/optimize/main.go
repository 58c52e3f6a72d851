// Command optimize finds jointly optimised routing, scheduling and KV-cache
// strategies for LLM inference clusters. See README.md.
package main

import (
	"os"

	"optimize/internal/cli"
	"optimize/internal/memlimit"
)

func main() {
	// The heap may grow a quarter beyond what is live, not double, once
	// that passes 160 MiB (a million-request simulation: about 180 MiB of
	// memory instead of 290); GOMEMLIMIT overrides it.
	memlimit.New(160<<20, 0.25).Start()
	os.Exit(cli.Execute(os.Args[1:], cli.Streams{Out: os.Stdout, Err: os.Stderr}))
}
