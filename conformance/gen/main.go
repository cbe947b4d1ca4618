// Command gen writes the seeded random input sequences of conformance scenarios in the
// replay format, for running one side by hand:
//
//	go run ./conformance/gen -scenarios tumbling-count -sequences 5 > in.jsonl
//	go run ./conformance/gen -scenarios 'ss-*' -out /tmp/seqs    # one NAME.jsonl per scenario
//
// The sequences are the same ones conformance/compare uses for the same -seed.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/streamgen/streamgen/conformance/internal/replay"
	"github.com/streamgen/streamgen/conformance/internal/scenario"
)

func main() {
	glob := flag.String("scenarios", "*", "glob of scenario names")
	n := flag.Int("sequences", 200, "sequences per scenario")
	seed := flag.Uint64("seed", 1, "random seed")
	out := flag.String("out", "", "directory for NAME.jsonl files (default: stdout, one scenario only)")
	flag.Parse()
	if err := run(*glob, *n, *seed, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(glob string, n int, seed uint64, out string) error {
	root, err := scenario.RepoRoot()
	if err != nil {
		return err
	}
	scs, err := scenario.LoadAll(filepath.Join(root, "conformance", "scenarios"), glob)
	if err != nil {
		return err
	}
	if len(scs) == 0 {
		return fmt.Errorf("no scenario matches %q", glob)
	}
	if out == "" {
		if len(scs) != 1 {
			return fmt.Errorf("%d scenarios match %q: use -out DIR for more than one", len(scs), glob)
		}
		return replay.Write(os.Stdout, scs[0].Generate(seed, n))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, s := range scs {
		f, err := os.Create(filepath.Join(out, s.Name+".jsonl"))
		if err != nil {
			return err
		}
		err = replay.Write(f, s.Generate(seed, n))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
