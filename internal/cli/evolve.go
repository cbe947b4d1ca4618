package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/streamgen/streamgen/internal/evolve"
	"github.com/streamgen/streamgen/spec"
)

// runEvolution is `streamgen check -against old`: it compares the spec with
// an older version and reports what would break an application running the
// older one. old is a spec file if one exists at that path, else a git
// revision whose copy of the spec's path is read with `git show`.
func runEvolution(prog *spec.Program, specPath, against string, stdout, stderr io.Writer) int {
	name, src, err := readOld(specPath, against)
	if err != nil {
		fmt.Fprintf(stderr, "streamgen: %v\n", err)
		return ExitIO
	}
	old, err := spec.Parse(name, src)
	if err != nil {
		fmt.Fprintf(stderr, "streamgen: the old spec %s does not parse:\n%s\n", name, strings.TrimRight(err.Error(), "\n"))
		return ExitProblem
	}
	r := evolve.Compare(old, prog)
	fmt.Fprint(stdout, r.String())
	if r.Breaking() {
		return ExitProblem
	}
	return ExitOK
}

// readOld reads the old spec. A file wins over a revision of the same name;
// positions in a revision's spec read `rev:path` as git spells it.
func readOld(specPath, against string) (name string, src []byte, err error) {
	if st, err := os.Stat(against); err == nil && !st.IsDir() {
		src, err := os.ReadFile(against)
		return filepath.ToSlash(filepath.Clean(against)), src, err
	}
	dir, base := filepath.Split(specPath)
	if dir == "" {
		dir = "."
	}
	cmd := exec.Command("git", "show", against+":./"+base)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", nil, fmt.Errorf("-against %q is neither a file nor a git revision holding %s: %s", against, filepath.ToSlash(specPath), msg)
	}
	return against + ":" + filepath.ToSlash(filepath.Clean(specPath)), out.Bytes(), nil
}
