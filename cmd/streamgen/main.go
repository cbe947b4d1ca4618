// Command streamgen compiles a streamgen spec (record schemas and a stream
// topology) into typed Go code. Run `streamgen help` for the commands.
package main

import (
	"os"

	"github.com/streamgen/streamgen/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
