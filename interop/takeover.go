package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// takeovers are the scenarios that start as a Kafka Streams application, or, reversed, as
// the streamgen app that Kafka Streams takes over from.
func takeovers(ss []*Scenario) []*Scenario {
	return keep(ss, func(s *Scenario) bool { return s.Takeover })
}

// splitReverse splits scenarios into those whose streamgen app runs beside the twins (every
// scenario but a reverse takeover) and the reverse takeovers, whose second half Kafka
// Streams runs.
func splitReverse(ss []*Scenario) (fwd, back []*Scenario) {
	return keep(ss, func(s *Scenario) bool { return !s.Reverse }), keep(ss, func(s *Scenario) bool { return s.Reverse })
}

// runFirstHalf is what a takeover scenario's streamgen app takes over from: the Java side
// writes the first half of the input, and Kafka Streams runs the scenario's topology under
// the app's own application id (the one runBothSides then starts the app with) and store and
// topic names, writing the app's output topic itself, until its group has committed all of
// that half; then it stops. What the group committed (input and repartition offsets, with
// Kafka Streams' commit metadata) and the changelogs it wrote are all the streamgen app gets:
// it starts on a fresh state directory. The twin that runs beside the app afterwards reads
// all of the input under another id, and the comparison then checks the combined output
// against it record for record, so an input record processed twice or state not restored
// is a difference. A reverse takeover swaps the two: its streamgen app runs the first half
// here, and Kafka Streams, on a fresh state directory, the second (runBothSides).
func runFirstHalf(ctx context.Context, cfg Config, adm *kadm.Client, tk []*Scenario, bins map[string]string, run string) error {
	fmt.Fprintf(cfg.Log, "interop: producing the first half of %d takeover scenarios (Java)\n", len(tk))
	if _, err := javaOutput(ctx, cfg, append([]string{"produce-first", strings.Join(cfg.Brokers, ","), registryArg(cfg)}, names(tk)...)...); err != nil {
		return err
	}
	var procs []*proc
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	groups := map[string][]string{}
	fwd, back := splitReverse(tk)
	if len(fwd) > 0 {
		p, err := startStreamsAs(cfg, fwd, run, "kstreams-first", groups)
		if err != nil {
			return err
		}
		procs = append(procs, p)
	}
	for _, s := range back {
		p, err := startApp(cfg, s, bins[s.Name], run)
		if err != nil {
			return err
		}
		procs = append(procs, p)
		groups[s.AppID+"-"+run] = s.consumed(s.AppID + "-" + run)
	}
	fmt.Fprintf(cfg.Log, "interop: the first half of %d takeover scenarios runs under their apps' ids (%d in Kafka Streams, %d in streamgen)\n", len(tk), len(fwd), len(back))
	if err := waitCommitted(ctx, adm, groups, procs, cfg.Timeout); err != nil {
		return err
	}
	return stopAll(procs)
}

// startStreamsAs starts one JVM that runs the scenarios' topologies under their streamgen
// apps' ids for this run (streams-as), on a fresh state directory work/<dir>, logging to
// logs/<dir>.log, and adds the groups it must commit to groups.
func startStreamsAs(cfg Config, ss []*Scenario, run, dir string, groups map[string][]string) (*proc, error) {
	if err := os.MkdirAll(filepath.Join(cfg.Work, "logs"), 0o755); err != nil {
		return nil, err
	}
	args := []string{"streams-as", strings.Join(cfg.Brokers, ","), registryArg(cfg), filepath.Join(cfg.Work, dir)}
	for _, s := range ss {
		id := s.AppID + "-" + run
		args = append(args, s.Name+"="+id)
		groups[id] = s.consumed(id)
	}
	return start(javaCmd(context.Background(), cfg, args...), filepath.Join(cfg.Work, "logs", dir+".log"), "Kafka Streams ("+dir+")")
}
