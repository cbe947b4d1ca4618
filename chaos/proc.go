package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// instance is one application process of a run: its state directory and
// static member id stay the same across restarts, as a pod's volume and
// name do in a StatefulSet.
type instance struct {
	name     string
	bin      string
	args     []string
	stateDir string
	logPath  string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	exitErr error
	gen     int  // restarts
	running int  // RUNNING states seen in the current process
	started bool // the current process logged: its signal handler is in place
	lines   []logLine
}

// logLine is one JSON log line of an instance (slog's JSON handler).
type logLine map[string]any

// keptLogs are the messages an instance keeps for the runner (with every
// error): restorations, assignments and rebalances.
var keptLogs = map[string]bool{"restored": true, "partitions assigned": true, "rebalance": true,
	"restoring store": true, "store restored": true}

// at is the line's time.
func (l logLine) at() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, l.str("time"))
	return t
}

// tasks is the length of the line's "tasks" list (a rebalance line's).
func (l logLine) tasks() int {
	ts, _ := l["tasks"].([]any)
	return len(ts)
}

func (l logLine) str(k string) string {
	s, _ := l[k].(string)
	return s
}

func (l logLine) num(k string) int64 {
	f, _ := l[k].(float64)
	return int64(f)
}

// start runs the instance (again). Its stderr is appended to its log file
// and parsed for the events the runner waits for.
func (in *instance) start() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cmd != nil && in.done != nil {
		select {
		case <-in.done:
		default:
			return fmt.Errorf("%s is already running", in.name)
		}
	}
	f, err := os.OpenFile(in.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "{\"msg\":\"chaos: start %d\"}\n", in.gen)
	cmd := exec.Command(in.bin, in.args...)
	cmd.SysProcAttr = sysProcAttr()
	cmd.Stdout = io.Discard
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("starting %s: %w", in.name, err)
	}
	in.cmd = cmd
	in.running = 0
	in.started = false
	in.gen++
	done := make(chan struct{})
	in.done = done
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			b := sc.Bytes()
			f.Write(b)
			f.Write([]byte{'\n'})
			var l logLine
			if json.Unmarshal(b, &l) != nil {
				continue
			}
			in.mu.Lock()
			in.started = true
			if l.str("msg") == "state change" && l.str("to") == "RUNNING" {
				in.running++
			}
			if m := l.str("msg"); keptLogs[m] || l.str("level") == "ERROR" {
				in.lines = append(in.lines, l)
			}
			in.mu.Unlock()
		}
		io.Copy(io.Discard, pr)
	}()
	go func() {
		err := cmd.Wait()
		pw.Close()
		<-scanned
		fmt.Fprintf(f, "{\"msg\":\"chaos: exit\",\"status\":%q}\n", fmt.Sprint(err))
		f.Close()
		in.mu.Lock()
		in.exitErr = err
		in.mu.Unlock()
		close(done)
	}()
	return nil
}

// alive reports whether the process runs.
func (in *instance) alive() bool {
	in.mu.Lock()
	done := in.done
	in.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// kill9 kills the process with SIGKILL and waits for it to be gone.
func (in *instance) kill9() {
	in.mu.Lock()
	cmd, done := in.cmd, in.done
	in.mu.Unlock()
	if cmd == nil || !in.alive() {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// stop sends SIGTERM (a clean shutdown: commit, close, exit 0) and waits up
// to timeout, then kills.
func (in *instance) stop(timeout time.Duration) error {
	in.mu.Lock()
	cmd, done := in.cmd, in.done
	in.mu.Unlock()
	if cmd == nil || !in.alive() {
		return nil
	}
	// A SIGTERM before the process installed its handler would kill it
	// outright; wait for its first log line.
	for i := 0; i < 300 && in.alive(); i++ {
		in.mu.Lock()
		started := in.started
		in.mu.Unlock()
		if started {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(timeout):
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		return fmt.Errorf("%s did not stop within %s after SIGTERM", in.name, timeout)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.exitErr != nil {
		return fmt.Errorf("%s exited after SIGTERM: %v (log %s)", in.name, in.exitErr, in.logPath)
	}
	return nil
}

// exitedBadly returns the exit error when the process ended by itself.
func (in *instance) exitedBadly() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.done == nil {
		return nil
	}
	select {
	case <-in.done:
		if in.exitErr != nil {
			return fmt.Errorf("%s exited on its own: %v (log %s)", in.name, in.exitErr, in.logPath)
		}
		return fmt.Errorf("%s exited on its own (log %s)", in.name, in.logPath)
	default:
		return nil
	}
}

func (in *instance) isRunning() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.running > 0
}

// restorations returns the "restored" log lines seen so far.
func (in *instance) restorations() []logLine { return in.logged("restored") }

// logged returns the kept log lines with message msg.
func (in *instance) logged(msg string) []logLine {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []logLine
	for _, l := range in.lines {
		if l.str("msg") == msg {
			out = append(out, l)
		}
	}
	return out
}

// findRepoFile walks up from the working directory to find rel (for
// scripts/kafka.sh and the module root).
func findRepoFile(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s not found above the working directory", rel)
		}
		dir = parent
	}
}
