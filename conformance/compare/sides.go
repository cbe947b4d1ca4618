package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamgen/streamgen/conformance/internal/replay"
	"github.com/streamgen/streamgen/conformance/internal/scenario"
)

// goTimeout bounds one scenario's Go side (including a go run build).
const goTimeout = 15 * time.Minute

func (r *runner) harness() string { return filepath.Join(r.root, "conformance", "java", "run.sh") }

// harnessOutput runs one of the harness's listing commands (describe,
// dsl-methods) and returns its standard output, or reports the failure with
// the tail of its standard error and returns false.
func (r *runner) harnessOutput(args ...string) ([]byte, bool) {
	cmd := exec.Command(r.harness(), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.errorf("java harness %s: %v\n%s", args[0], err, tail(stderr.String(), 30))
		return nil, false
	}
	return out, true
}

// javaEnv passes the harness the options it reads from system properties:
// the stores, and the record cache when -cache-bytes overrides every
// scenario's (the harness reads each scenario's own from scenario.json).
func (r *runner) javaEnv() []string {
	var opts []string
	if r.opts.javaStores == "memory" {
		opts = append(opts, "-Dconformance.stores=memory")
	}
	if r.opts.cacheBytes >= 0 {
		opts = append(opts, fmt.Sprintf("-Dconformance.cacheBytes=%d", r.opts.cacheBytes))
	}
	env := os.Environ()
	if len(opts) > 0 {
		env = append(env, "CONFORMANCE_JAVA_OPTS="+strings.Join(opts, " "))
	}
	return env
}

// javaScenarios lists the scenario names the harness knows (building it first if needed).
func (r *runner) javaScenarios() (map[string]bool, error) {
	cmd := exec.Command(r.harness(), "list")
	cmd.Env = r.javaEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v\n%s", err, tail(stderr.String(), 30))
	}
	known := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		if !validName(l) {
			// Anything else on the harness's standard output (a build tool's log) would
			// silently hide the scenario it is glued to; say what it was instead.
			return nil, fmt.Errorf("unexpected output from %s list: %q", r.harness(), l)
		}
		known[l] = true
	}
	return known, nil
}

// validName reports whether s can be a scenario name: lower-case letters, digits and dashes.
func validName(s string) bool {
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return s != ""
}

// runJava runs all given scenarios in one JVM and returns each scenario's output file.
func (r *runner) runJava(scs []*scenario.Scenario, inputs map[string][]byte, tag string) (map[string][]byte, error) {
	args := []string{"run", filepath.Join(r.root, "conformance", "scenarios")}
	for _, s := range scs {
		in := filepath.Join(r.work, s.Name+tag+".in.jsonl")
		if err := os.WriteFile(in, inputs[s.Name], 0o644); err != nil {
			return nil, err
		}
		args = append(args, s.Name, in, filepath.Join(r.work, s.Name+tag+".java.jsonl"))
	}
	cmd := exec.Command(r.harness(), args...)
	cmd.Env = r.javaEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if r.opts.verbose && tag == "" {
		cmd.Stderr = &prefixWriter{w: os.Stdout, buf: &stderr}
	}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, tail(stderr.String(), 40))
	}
	out := map[string][]byte{}
	for _, s := range scs {
		b, err := os.ReadFile(filepath.Join(r.work, s.Name+tag+".java.jsonl"))
		if err != nil {
			return nil, err
		}
		out[s.Name] = b
	}
	return out, nil
}

// runGo runs the scenario's Go side with the sequence file on stdin.
func (r *runner) runGo(s *scenario.Scenario, input []byte, tag string) ([]byte, error) {
	line := expand(r.opts.goCmd, s, r.root)
	ctx, cancel := context.WithTimeout(context.Background(), goTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = r.root
	// The record cache reaches the Go side through the environment, so a
	// -go-cmd of one's own can honour it too (go-side.sh passes it to
	// replay's --cache-bytes).
	cmd.Env = append(os.Environ(), fmt.Sprintf("STREAMGEN_CONFORMANCE_CACHE_BYTES=%d", s.CacheBytes))
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go side `%s`: %v\n%s", line, err, tail(stderr.String(), 30))
	}
	if r.opts.keep != "" {
		os.WriteFile(filepath.Join(r.work, s.Name+tag+".go.jsonl"), stdout.Bytes(), 0o644)
	}
	return stdout.Bytes(), nil
}

func encode(seqs []replay.Sequence) []byte {
	var b bytes.Buffer
	if err := replay.Write(&b, seqs); err != nil {
		panic(err) // writing to memory cannot fail
	}
	return b.Bytes()
}

func decode(b []byte) ([]replay.Sequence, error) { return replay.Read(bytes.NewReader(b)) }

func tail(s string, lines int) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if strings.HasPrefix(l, "SLF4J:") {
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) > lines {
		keep = keep[len(keep)-lines:]
	}
	return strings.Join(keep, "\n")
}

// prefixWriter shows the harness's progress lines while keeping everything for errors.
type prefixWriter struct {
	w       *os.File
	buf     *bytes.Buffer
	partial []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf.Write(b)
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		if line := string(p.partial[:i]); strings.HasPrefix(line, "harness:") {
			fmt.Fprintln(p.w, line)
		}
		p.partial = p.partial[i+1:]
	}
	return len(b), nil
}
