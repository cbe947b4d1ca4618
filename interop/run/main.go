// Command run is the interop suite (make interop): every scenario of interop/scenarios on a
// real broker, STREAMGEN_KAFKA_BROKERS (scripts/with-kafka.sh starts one), and a real schema
// registry, STREAMGEN_REGISTRY_URL (scripts/registry.sh), for the scenarios that need it. It
// ends with the line `interop: <S> scenarios, <N> records, <D> differences` and exits 1 when
// D > 0 or the run broke.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamgen/streamgen/interop"
)

func main() {
	pattern := flag.String("scenarios", "*", "glob over scenario names")
	quick := flag.Bool("quick", false, "only the quick subset (what go test runs)")
	keep := flag.Bool("keep", false, "keep the scratch directory (logs, state) and print its path")
	timeout := flag.Duration("timeout", 4*time.Minute, "how long both sides may take to process the input")
	flag.Parse()
	if err := run(*pattern, *quick, *keep, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(pattern string, quick, keep bool, timeout time.Duration) error {
	brokers := os.Getenv("STREAMGEN_KAFKA_BROKERS")
	if brokers == "" {
		return fmt.Errorf("interop: STREAMGEN_KAFKA_BROKERS is not set: run under scripts/with-kafka.sh (make interop does)")
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	ss, err := interop.Load(root, pattern)
	if err != nil {
		return err
	}
	if quick {
		ss = interop.QuickOnly(ss)
	}
	work, err := os.MkdirTemp("", "streamgen-interop-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintf(os.Stderr, "interop: scratch directory %s\n", work)
	} else {
		defer os.RemoveAll(work)
	}
	cfg := interop.Config{Root: root, Brokers: strings.Split(brokers, ","), Registry: os.Getenv("STREAMGEN_REGISTRY_URL"),
		Work: filepath.Clean(work), Log: os.Stdout, Timeout: timeout}
	res, err := interop.Run(context.Background(), cfg, ss)
	if err != nil {
		return err
	}
	fmt.Println(res.Summary())
	if res.Differences > 0 {
		os.Exit(1)
	}
	return nil
}
