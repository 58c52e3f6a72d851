// Command worker joins studies through shared storage (SQLite on one
// machine, PostgreSQL across machines) and runs their trials until every
// study it works on reaches its total. See docs/scaling-out.md.
package main

import (
	"os"

	"optimize/internal/cli"
)

func main() {
	os.Exit(cli.ExecuteWorker(os.Args[1:], cli.Streams{Out: os.Stdout, Err: os.Stderr}))
}
