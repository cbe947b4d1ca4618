// Command jsonapp is golden/json's application as a binary, for the e2e
// tests of produce and consume: that case has a record topic in each
// format (in: json, packed: msgpack) and, being a golden case, no main of
// its own. It lives under testdata so that only those tests build it
// (go build ./... and go list ./... skip testdata).
package main

import (
	"os"

	app "github.com/streamgen/streamgen/golden/json"
	"github.com/streamgen/streamgen/runtime/sgapp"
)

func main() { os.Exit(sgapp.Main(app.NewApp(), os.Args[1:])) }
