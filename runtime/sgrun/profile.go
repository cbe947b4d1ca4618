package sgrun

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
)

// A generated binary writes profiles when these variables name files: a CPU
// profile from process start, and a heap profile of the memory in use, both
// taken at SIGINT or SIGTERM (complete before the clean shutdown begins,
// which goes on as usual). It is how bench/harness's runs are profiled
// without rebuilding the applications:
//
//	STREAMGEN_CPUPROFILE=count.prof STREAMGEN_MEMPROFILE=count.heap ./streamcount run ...
//	go tool pprof -top streamcount count.prof
//	go tool pprof -top -inuse_space streamcount count.heap
//
// Built with CGO_ENABLED=0, as `make` and the project Dockerfile build,
// Pebble's block cache and memtables are Go heap memory and show in the
// heap profile; with cgo they are C memory and do not.
func init() {
	cpu, heap := os.Getenv("STREAMGEN_CPUPROFILE"), os.Getenv("STREAMGEN_MEMPROFILE")
	if cpu == "" && heap == "" {
		return
	}
	stopCPU := startCPUProfile(cpu)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		signal.Stop(sig)
		stopCPU()
		writeHeapProfile(heap)
	}()
}

// startCPUProfile starts a CPU profile into path (none when path is empty)
// and returns what stops it.
func startCPUProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "streamgen: STREAMGEN_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "streamgen: STREAMGEN_CPUPROFILE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// writeHeapProfile writes the heap profile after a collection, so that it
// shows the memory in use rather than garbage not yet collected.
func writeHeapProfile(path string) {
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "streamgen: STREAMGEN_MEMPROFILE: %v\n", err)
		return
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		fmt.Fprintf(os.Stderr, "streamgen: STREAMGEN_MEMPROFILE: %v\n", err)
	}
}
