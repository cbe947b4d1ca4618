package sgrun

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// A generated binary writes a CPU profile when STREAMGEN_CPUPROFILE names a
// file: from process start until SIGINT or SIGTERM (the profile is complete
// before the clean shutdown begins, which goes on as usual). It is how
// bench/harness's runs are profiled without rebuilding the applications:
//
//	STREAMGEN_CPUPROFILE=count.prof ./streamcount run ...
//	go tool pprof -top streamcount count.prof
func init() {
	path := os.Getenv("STREAMGEN_CPUPROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "streamgen: STREAMGEN_CPUPROFILE: %v\n", err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "streamgen: STREAMGEN_CPUPROFILE: %v\n", err)
		f.Close()
		return
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		signal.Stop(sig)
		pprof.StopCPUProfile()
		f.Close()
	}()
}
