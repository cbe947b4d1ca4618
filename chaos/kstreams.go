package chaos

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"text/tabwriter"
	"time"
)

// KStreamsApp builds the Kafka Streams side of the harness (chaos/java: the
// chaos/eos topology written with Kafka Streams) and returns its launcher.
// The launcher takes the flags a streamgen instance's run command takes and
// logs the lines the runner reads, so it stands in for Config.Bin and the
// same schedule plays on the Java original. Building first keeps Maven's
// time out of the first instance's start.
func KStreamsApp(ctx context.Context) (string, error) {
	script, err := findRepoFile("chaos/java/run.sh")
	if err != nil {
		return "", err
	}
	build, err := findRepoFile("scripts/mvn-build.sh")
	if err != nil {
		return "", err
	}
	if out, err := exec.CommandContext(ctx, "bash", build, filepath.Dir(script)).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building chaos/java: %v\n%s", err, out)
	}
	return script, nil
}

// PhaseTable writes two rolling runs' phases side by side, streamgen's
// first: the longest output gap of each (and streamgen's as a fraction of
// the other's), the records restored, restorations from scratch and the
// time until every task ran again. Phases are matched by position; both
// runs play the same schedule.
func PhaseTable(w io.Writer, ours, theirs []Phase) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "phase\tlongest gap (streamgen / Kafka Streams)\tratio\trestored records\tfrom scratch\tevery task running after")
	for i := range min(len(ours), len(theirs)) {
		a, b := ours[i], theirs[i]
		ratio := "-"
		if b.Gap > 0 {
			ratio = fmt.Sprintf("%.2f×", a.Gap.Seconds()/b.Gap.Seconds())
		}
		fmt.Fprintf(tw, "%s\t%s / %s\t%s\t%d / %d\t%d / %d\t%s / %s\n", a.Name,
			a.Gap.Round(100*time.Millisecond), b.Gap.Round(100*time.Millisecond), ratio,
			a.Restored, b.Restored, a.Scratch, b.Scratch,
			a.Settled.Round(100*time.Millisecond), b.Settled.Round(100*time.Millisecond))
	}
	tw.Flush()
}
