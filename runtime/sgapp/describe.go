package sgapp

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/streamgen/streamgen/internal/topodesc"
)

// describeCommand prints the topology. The generated code embeds only the
// text form; the pictures are rendered from it by the same renderer
// `streamgen describe` uses, so both print the same bytes in every format.
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

// Describe renders the app's topology description in format: "text" (as
// generated), "mermaid" or "dot".
func Describe(app *App, format string) (string, error) {
	if format == "text" || format == "" {
		return app.Describe, nil
	}
	g, err := topodesc.ParseText(app.Describe)
	if err != nil {
		return "", err
	}
	return g.Render(format)
}
