package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// child is one measured process: a generated application, the Kafka
// Streams program, the Faust worker or a limit client. All of them print
// the probe lines (see bench/internal/probe).
type child struct {
	name    string
	cmd     *exec.Cmd
	started time.Time
	events  chan event
	exited  chan struct{}
	log     string
}

type event struct {
	kind string // first, progress, done
	n    int64
	at   time.Time
}

// startChild starts argv with env added, its stderr in logPath.
func startChild(name string, argv []string, env []string, dir, logPath string) (*child, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	c := &child{name: name, cmd: cmd, events: make(chan event, 64), exited: make(chan struct{}), log: logPath}
	c.started = time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go func() {
		c.scan(out, logf)
		cmd.Wait()
		logf.Close()
		close(c.exited)
	}()
	return c, nil
}

// scan turns probe lines into events; other stdout lines go to the log.
func (c *child) scan(r io.Reader, logf *os.File) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "BENCH" {
			fmt.Fprintln(logf, "stdout:", sc.Text())
			continue
		}
		ev := event{kind: f[1]}
		var us int64
		switch f[1] {
		case "first":
			us, _ = strconv.ParseInt(f[2], 10, 64)
		case "progress", "done":
			if len(f) < 4 {
				continue
			}
			ev.n, _ = strconv.ParseInt(f[2], 10, 64)
			us, _ = strconv.ParseInt(f[3], 10, 64)
		default:
			continue
		}
		ev.at = time.UnixMicro(us)
		select {
		case c.events <- ev:
		default: // nobody listens any more
		}
	}
	io.Copy(io.Discard, r)
}

// outcome is what waitDone saw.
type outcome struct {
	first, done time.Time
	processed   int64
	// half is the first progress report at or past half the expected
	// count: the rate from there to done is past start-up and warm-up.
	half event
	err  error
}

// waitDone waits for the done line, reporting progress, until timeout.
func (c *child) waitDone(timeout time.Duration, expect int64, progress func(n int64)) outcome {
	var o outcome
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case ev := <-c.events:
			switch ev.kind {
			case "first":
				o.first = ev.at
			case "progress":
				o.processed = ev.n
				if o.half.n == 0 && ev.n*2 >= expect {
					o.half = ev
				}
				if progress != nil {
					progress(ev.n)
				}
			case "done":
				o.processed, o.done = ev.n, ev.at
				return o
			}
		case <-c.exited:
			// Drain what was printed before the exit.
			for {
				select {
				case ev := <-c.events:
					if ev.kind == "first" {
						o.first = ev.at
					}
					if ev.kind == "done" {
						o.processed, o.done = ev.n, ev.at
						return o
					}
				default:
					o.err = fmt.Errorf("%s exited early (%v); log: %s", c.name, c.cmd.ProcessState, c.log)
					return o
				}
			}
		case <-deadline.C:
			o.err = fmt.Errorf("%s: timed out after %v with %d records processed; log: %s", c.name, timeout, o.processed, c.log)
			return o
		}
	}
}

// waitFirst waits for the first processed record only.
func (c *child) waitFirst(timeout time.Duration) (time.Time, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case ev := <-c.events:
			if ev.kind == "first" {
				return ev.at, nil
			}
		case <-c.exited:
			return time.Time{}, fmt.Errorf("%s exited early (%v); log: %s", c.name, c.cmd.ProcessState, c.log)
		case <-deadline.C:
			return time.Time{}, fmt.Errorf("%s: no record processed after %v; log: %s", c.name, timeout, c.log)
		}
	}
}

// peakRSS is the child's VmHWM in bytes (its peak resident set so far).
func (c *child) peakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// stop ends the child with SIGTERM (a clean shutdown: the last commit
// happens), SIGKILL after grace; it returns the child's CPU seconds (user +
// system, from its rusage).
func (c *child) stop(grace time.Duration) float64 {
	select {
	case <-c.exited:
	default:
		c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(grace):
			c.cmd.Process.Kill()
			<-c.exited
		}
	}
	return c.cpu()
}

// kill9 ends the child with SIGKILL at once.
func (c *child) kill9() float64 {
	c.cmd.Process.Kill()
	<-c.exited
	return c.cpu()
}

func (c *child) cpu() float64 {
	if c.cmd.ProcessState == nil {
		return 0
	}
	ru, ok := c.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
