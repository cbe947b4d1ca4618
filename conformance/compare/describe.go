package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/streamgen/streamgen/conformance/internal/describecheck"
	"github.com/streamgen/streamgen/conformance/internal/scenario"
)

// checkDescribe compares each scenario's generated binary's describe (the
// graph the runtime runs) with Kafka Streams' Topology#describe of its Java
// twin (describecheck says which names are normalised) and prints
//
//	describe: <E> of <N> scenarios equal Kafka Streams' (names the spec does not fix aside)
//
// It needs the binaries the default Go side builds (conformance/.run/NAME/app).
// A difference is an error unless -describe=false (then it is only
// counted), so `make test`'s quick run fails when the graph the runtime
// builds (internal/topograph's layouts) stops being Kafka Streams'.
func (r *runner) checkDescribe(scs []*scenario.Scenario) {
	if r.opts.goCmd != defaultGoCmd {
		return
	}
	var names []string
	bins := map[string]string{}
	for _, s := range scs {
		bin := filepath.Join(r.root, "conformance", ".run", s.Name, "app")
		if _, err := os.Stat(bin); err == nil {
			names, bins[s.Name] = append(names, s.Name), bin
		}
	}
	if len(names) == 0 {
		return
	}
	out, ok := r.harnessOutput(append([]string{"describe"}, names...)...)
	if !ok {
		return
	}
	java := splitDescribes(string(out))
	equal := 0
	for _, name := range names {
		ours, err := exec.Command(bins[name], "describe").Output()
		if err != nil {
			r.errorf("%s: describe: %v", name, err)
			continue
		}
		if err := describecheck.Compare(java[name], string(ours)); err != nil {
			if r.opts.describe {
				r.errorf("%s: describe differs from Kafka Streams': %v", name, err)
			} else if r.opts.verbose {
				fmt.Printf("%s: describe differs from Kafka Streams': %v\n", name, err)
			}
			continue
		}
		equal++
	}
	fmt.Printf("describe: %d of %d scenarios equal Kafka Streams' (names the spec does not fix aside)\n", equal, len(names))
}

// splitDescribes splits the harness's describe output ("scenario NAME"
// lines, each followed by that scenario's description) by scenario.
func splitDescribes(s string) map[string]string {
	out := map[string]string{}
	var cur string
	for _, l := range strings.SplitAfter(s, "\n") {
		if name, ok := strings.CutPrefix(l, "scenario "); ok {
			cur = strings.TrimSpace(name)
			continue
		}
		if cur != "" {
			out[cur] += l
		}
	}
	return out
}
