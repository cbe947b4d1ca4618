package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/streamgen/streamgen/internal/specfmt"
	"github.com/streamgen/streamgen/internal/textdiff"
)

const fmtHelp = `usage: streamgen fmt [-w] [-d] [file...]

Normalises spec files: keys in the schema's order (a step's operation
first), two-space indentation, flow style kept where the author used it and
the line fits in 120 columns, a blank line between top-level sections,
comments kept. Formatting twice changes nothing, and the formatted spec
means exactly what the original did.

With no file, reads stdin and writes stdout. Without -w or -d, prints the
formatted files to stdout.

Flags:
  -w   write the result back to each file (only files that change)
  -d   print a unified diff for each file that is not formatted, and exit 1
       if there is one (for CI)
`

func runFmt(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("streamgen fmt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	write := fs.Bool("w", false, "write the result back to each file")
	diff := fs.Bool("d", false, "print a diff for each file that is not formatted; exit 1 if any")
	fs.Usage = func() { fmt.Fprint(stdout, fmtHelp) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	files := fs.Args()
	if len(files) == 0 {
		if *write {
			fmt.Fprintln(stderr, "streamgen fmt: -w needs file arguments")
			return ExitUsage
		}
		src, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintf(stderr, "streamgen: %v\n", err)
			return ExitIO
		}
		out, err := specfmt.Format(src)
		if err != nil {
			fmt.Fprintf(stderr, "<stdin>: %v\n", err)
			return ExitProblem
		}
		if *diff {
			if d := textdiff.Unified("<stdin>", "<stdin> (formatted)", string(src), string(out)); d != "" {
				fmt.Fprint(stdout, d)
				return ExitProblem
			}
			return ExitOK
		}
		stdout.Write(out)
		return ExitOK
	}
	code := ExitOK
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintf(stderr, "streamgen: %v\n", err)
			code = max(code, ExitIO)
			continue
		}
		out, err := specfmt.Format(src)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", filepath.ToSlash(name), err)
			code = max(code, ExitProblem)
			continue
		}
		same := bytes.Equal(src, out)
		if *diff && !same {
			p := filepath.ToSlash(name)
			fmt.Fprint(stdout, textdiff.Unified(p, p+" (formatted)", string(src), string(out)))
			code = max(code, ExitProblem)
		}
		if *write && !same {
			st, err := os.Stat(name)
			mode := os.FileMode(0o644)
			if err == nil {
				mode = st.Mode().Perm()
			}
			if err := os.WriteFile(name, out, mode); err != nil {
				fmt.Fprintf(stderr, "streamgen: %v\n", err)
				code = max(code, ExitIO)
			}
		}
		if !*write && !*diff {
			stdout.Write(out)
		}
	}
	return code
}
