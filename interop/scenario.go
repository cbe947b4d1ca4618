// Package interop is the Go side of the interop suite: it runs each scenario of
// interop/scenarios twice on a real broker (and, for the registry formats, a real schema
// registry), once as the generated streamgen app and once as its Kafka Streams twin in
// interop/java, with the same input written by a Java producer, and compares what a Java
// consumer reads from both outputs record for record. README.md says how to run it.
package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/streamgen/streamgen/spec"
)

// Scenario is one directory of interop/scenarios: a spec, its user functions and generated
// code (package main), and scenario.json.
type Scenario struct {
	Name string
	Dir  string // relative to the repository root, slash-separated
	// Formats are the wire formats its topics use, for the summary.
	Formats []string `json:"formats"`
	// Outputs are the topics the app writes; the twin writes each with TwinSuffix.
	Outputs []string `json:"outputs"`
	// Tombstones are the outputs that must carry tombstones on both sides (a value the
	// consumer reads as null): a scenario about nulls that wrote none would test nothing.
	Tombstones []string `json:"tombstones"`
	// Quick scenarios are the subset the go test (make test) runs.
	Quick bool `json:"quick"`
	// Takeover scenarios start as a Kafka Streams application under the app's own id, which
	// processes the first half of the input and stops; the streamgen app then takes over its
	// group and state (see runFirstHalf).
	Takeover bool `json:"takeover"`
	// Reverse takeovers go the other way: the streamgen app processes the first half and
	// stops, and Kafka Streams takes over its group and state (the way back to Kafka Streams).
	Reverse bool `json:"reverse"`
	// Registry is true when a topic uses a registry format, so the run needs a registry.
	Registry bool `json:"-"`

	AppID  string   `json:"-"`
	Inputs []string `json:"-"`
	// Repartitions are the names of the spec's repartition topics, without the
	// application id and "-repartition" around them.
	Repartitions []string       `json:"-"`
	Topics       map[string]int `json:"-"` // every topic of the spec and its partitions
}

// TwinSuffix ends the name of the topic the Kafka Streams twin writes in place of an output.
const TwinSuffix = ".kstreams"

// registryFormats are the formats whose topics carry the Confluent wire format.
var registryFormats = []string{string(spec.FormatAvro), string(spec.FormatProtobuf), string(spec.FormatJSONSchema)}

// Load reads every scenario under root/interop/scenarios whose name matches the glob pattern.
func Load(root, pattern string) ([]*Scenario, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "interop", "scenarios", "*", "scenario.json"))
	if err != nil {
		return nil, err
	}
	var out []*Scenario
	for _, p := range dirs {
		dir := filepath.Dir(p)
		name := filepath.Base(dir)
		if ok, err := filepath.Match(pattern, name); err != nil || !ok {
			if err != nil {
				return nil, fmt.Errorf("interop: -scenarios %q: %v", pattern, err)
			}
			continue
		}
		s, err := loadOne(root, dir, name)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("interop: no scenario under interop/scenarios matches %q", pattern)
	}
	return out, nil
}

// loadOne reads scenario.json and the spec, whose topics it creates and whose app id it
// runs under; every topic not an output is an input the Java producer writes.
func loadOne(root, dir, name string) (*Scenario, error) {
	b, err := os.ReadFile(filepath.Join(dir, "scenario.json"))
	if err != nil {
		return nil, err
	}
	s := &Scenario{Name: name}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("interop: %s/scenario.json: %v", name, err)
	}
	rel, _ := filepath.Rel(root, dir)
	s.Dir = filepath.ToSlash(rel)
	prog, err := spec.ParseFile(filepath.Join(dir, "streamgen.yaml"))
	if err != nil {
		return nil, fmt.Errorf("interop: %s: %v", name, err)
	}
	s.AppID = prog.App.ID
	s.Topics = map[string]int{}
	for _, t := range prog.Topics {
		s.Topics[t.Name] = max(t.Partitions, 1)
		if !slices.Contains(s.Outputs, t.Name) {
			s.Inputs = append(s.Inputs, t.Name)
		}
		for _, f := range []spec.Format{t.KeyFormat, t.ValueFormat} {
			if slices.Contains(registryFormats, string(f)) {
				s.Registry = true
			}
		}
	}
	for _, n := range prog.Nodes {
		if n.Repartition != nil {
			s.Repartitions = append(s.Repartitions, n.Repartition.Name)
		}
	}
	for _, o := range s.Outputs {
		n, ok := s.Topics[o]
		if !ok {
			return nil, fmt.Errorf("interop: %s/scenario.json: output %q is not a topic of the spec", name, o)
		}
		s.Topics[o+TwinSuffix] = n
	}
	if s.Reverse && !s.Takeover {
		return nil, fmt.Errorf("interop: %s/scenario.json: reverse is a kind of takeover (set takeover too)", name)
	}
	if len(s.Inputs) == 0 || len(s.Formats) == 0 {
		return nil, fmt.Errorf("interop: %s/scenario.json: needs formats, and a spec with input topics", name)
	}
	return s, nil
}

// consumed are the topics the application appID reads: the inputs and its
// repartition topics, whose records must be processed too before the outputs are complete.
func (s *Scenario) consumed(appID string) []string {
	out := slices.Clone(s.Inputs)
	for _, r := range s.Repartitions {
		out = append(out, appID+"-"+r+"-repartition")
	}
	return out
}

// FormatsOf lists the formats the scenarios cover, sorted, for the summary.
func FormatsOf(ss []*Scenario) string {
	var fs []string
	for _, s := range ss {
		for _, f := range s.Formats {
			if !slices.Contains(fs, f) {
				fs = append(fs, f)
			}
		}
	}
	slices.Sort(fs)
	return strings.Join(fs, ", ")
}

// QuickOnly keeps the scenarios marked quick.
func QuickOnly(ss []*Scenario) []*Scenario {
	return keep(ss, func(s *Scenario) bool { return s.Quick })
}

// keep returns the scenarios of ss for which ok holds, in order.
func keep(ss []*Scenario, ok func(*Scenario) bool) []*Scenario {
	var out []*Scenario
	for _, s := range ss {
		if ok(s) {
			out = append(out, s)
		}
	}
	return out
}
