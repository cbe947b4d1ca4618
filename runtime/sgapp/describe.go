package sgapp

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/streamgen/streamgen/internal/topodesc"
)

// describeCommand prints the topology the binary runs: the description is
// rendered from the graph the runtime builds (sgstream.Topology.Describe),
// so it cannot drift from what runs; `streamgen describe` renders the same
// bytes from the spec (golden tests compare the two).
func describeCommand(app *App, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("describe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: "+strings.Join(topodesc.Formats, ", "))
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: describe: unexpected argument %q\n", app.ID, fs.Arg(0))
		return 2
	}
	out, err := Describe(app, *format)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", app.ID, err)
		return 2
	}
	fmt.Fprint(stdout, out)
	return 0
}

// Describe renders the app's topology in format: "text" (Kafka Streams'
// Topology#describe), "mermaid" or "dot".
func Describe(app *App, format string) (string, error) {
	tp, err := app.Topology()
	if err != nil {
		return "", err
	}
	return tp.Describe().Render(format)
}
