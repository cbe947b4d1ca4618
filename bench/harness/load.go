package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of /proc's CPU times (100 on
// every architecture Go supports on Linux; sysconf needs cgo).
const clockTicks = 100

// loadedCores is how many cores of other work, on average over a run, make
// its figures "from a loaded machine" in the report.
const loadedCores = 0.25

// cpuMeter measures the CPU the machine spent during one run on work other
// than the run itself: all busy CPU time, less the system under test's,
// the harness's own and the broker's. That is the share of the cores that
// other processes took from the comparison (the load average cannot tell
// it: the run and the broker load the cores themselves).
type cpuMeter struct {
	brokerPID int
	start     cpuReading
}

// cpuReading is one look at the CPU seconds spent so far.
type cpuReading struct {
	at                    time.Time
	machine, self, broker float64 // machine < 0: unknown
}

func startMeter(brokerPID int) *cpuMeter {
	return &cpuMeter{brokerPID: brokerPID, start: readCPU(brokerPID)}
}

func readCPU(brokerPID int) cpuReading {
	r := cpuReading{at: time.Now(), machine: -1}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		r.machine = machineBusy(string(b))
	}
	r.self = procCPU("self")
	if brokerPID > 0 {
		r.broker = procCPU(strconv.Itoa(brokerPID))
	}
	return r
}

// otherCores is the average number of cores busy with other work since the
// meter started, given the CPU seconds the system under test used; -1 when
// /proc cannot tell.
func (m *cpuMeter) otherCores(childCPU float64) float64 {
	return otherCores(m.start, readCPU(m.brokerPID), childCPU)
}

func otherCores(a, b cpuReading, childCPU float64) float64 {
	wall := b.at.Sub(a.at).Seconds()
	if wall <= 0 || a.machine < 0 || b.machine < 0 {
		return -1
	}
	other := (b.machine - a.machine) - (b.self - a.self) - (b.broker - a.broker) - childCPU
	return max(other, 0) / wall
}

// machineBusy is the CPU seconds all cores spent on anything but idling
// (iowait counts as idle), from the text of /proc/stat; -1 when it cannot
// be parsed.
func machineBusy(stat string) float64 {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return -1
	}
	var total, idle float64
	for i, v := range f[1:] {
		if i >= 8 { // guest time is already counted in user
			break
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return -1
		}
		total += n
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	return (total - idle) / clockTicks
}

// procCPU is the user and system CPU seconds of /proc/<pid>, 0 when it
// cannot be read (a broker the harness was not told about).
func procCPU(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	return statCPU(string(b))
}

// statCPU reads utime and stime from the text of /proc/<pid>/stat.
func statCPU(stat string) float64 {
	// The command name may hold spaces and parentheses; the fields after
	// its last ')' are fixed: state is the first, utime the 12th.
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	var sum float64
	for _, v := range f[11:13] {
		n, _ := strconv.ParseFloat(v, 64)
		sum += n
	}
	return sum / clockTicks
}

// loadedRuns names the runs during which other work kept more than
// loadedCores cores busy on average: their figures shared the CPU with
// other work, so their ratios say less than the others' (issue 17 asks the
// report to say which figures are from a loaded machine).
func (r *report) loadedRuns() string {
	var loaded []string
	known := 0
	for _, x := range r.results {
		if x.OtherCores == nil {
			continue
		}
		known++
		if *x.OtherCores > loadedCores {
			loaded = append(loaded, fmt.Sprintf("%s %s %s (%.2f)", x.Scenario, x.System, x.Guarantee, *x.OtherCores))
		}
	}
	switch {
	case known == 0:
		return ""
	case len(loaded) == 0:
		return fmt.Sprintf("During every run, other work (besides the system under test, the broker and the harness) kept fewer than %.2f cores busy on average.\n", loadedCores)
	}
	return fmt.Sprintf("Runs during which other work (besides the system under test, the broker and the harness) kept more than %.2f cores busy on average, so that their figures are from a loaded machine (cores in parentheses): %s.\n",
		loadedCores, strings.Join(loaded, "; "))
}
