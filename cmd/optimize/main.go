// Command optimize finds jointly optimised routing, scheduling and KV-cache
// strategies for LLM inference clusters. See README.md.
package main

import (
	"os"

	"optimize/internal/cli"
)

func main() {
	os.Exit(cli.Execute(os.Args[1:], cli.Streams{Out: os.Stdout, Err: os.Stderr}))
}
