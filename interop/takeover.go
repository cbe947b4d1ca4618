package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// takeovers are the scenarios that start as a Kafka Streams application.
func takeovers(ss []*Scenario) []*Scenario {
	return keep(ss, func(s *Scenario) bool { return s.Takeover })
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
// is a difference.
func runFirstHalf(ctx context.Context, cfg Config, adm *kadm.Client, tk []*Scenario, run string) error {
	fmt.Fprintf(cfg.Log, "interop: producing the first half of %d takeover scenarios (Java)\n", len(tk))
	if _, err := javaOutput(ctx, cfg, append([]string{"produce-first", strings.Join(cfg.Brokers, ","), registryArg(cfg)}, names(tk)...)...); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(cfg.Work, "logs"), 0o755); err != nil {
		return err
	}
	args := []string{"streams-as", strings.Join(cfg.Brokers, ","), registryArg(cfg), filepath.Join(cfg.Work, "kstreams-first")}
	groups := map[string][]string{}
	for _, s := range tk {
		id := s.AppID + "-" + run
		args = append(args, s.Name+"="+id)
		groups[id] = s.consumed(id)
	}
	p, err := start(javaCmd(context.Background(), cfg, args...), filepath.Join(cfg.Work, "logs", "kstreams-first.log"), "Kafka Streams (first half)")
	if err != nil {
		return err
	}
	defer p.stop()
	fmt.Fprintf(cfg.Log, "interop: Kafka Streams runs the first half of %d takeover scenarios under their apps' ids\n", len(tk))
	if err := waitCommitted(ctx, adm, groups, []*proc{p}, cfg.Timeout); err != nil {
		return err
	}
	return p.stop()
}
