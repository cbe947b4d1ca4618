// Package scenario loads conformance scenarios (conformance/scenarios/NAME/scenario.json)
// and generates their random input sequences.
package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/streamgen/streamgen/conformance/internal/replay"
)

// SharedFuncsDir is the directory, beside the scenarios, of the user
// functions several scenarios share (Scenario.Funcs). Its leading underscore
// keeps the go command's ./... patterns out of it.
const SharedFuncsDir = "_funcs"

// Scenario is one scenario.json.
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Funcs names the shared user functions of a family of scenarios,
	// SharedFuncsDir/<Funcs>.go, for a scenario without a funcs.go of its own:
	// the seven stream-stream joins, say, differ in their specs only.
	Funcs string `json:"funcs,omitempty"`
	// Order is "sequence" (default: outputs of each topic must match in order) or
	// "multiset" (order within a topic is ignored). Use multiset only where Kafka Streams
	// leaves the order open, and say why in OrderNote.
	Order     string                      `json:"order"`
	OrderNote string                      `json:"order_note,omitempty"`
	Inputs    []Input                     `json:"inputs"`
	Outputs   []Output                    `json:"outputs"`
	Records   map[string]map[string]Field `json:"records,omitempty"`
	Generator Generator                   `json:"generator"`
	// CacheBytes is the record cache both sides run with: Kafka Streams'
	// statestore.cache.max.bytes, replay's --cache-bytes. 0 (the default)
	// forwards every update; with a cache, TopologyTestDriver still commits,
	// and so flushes, after every record, so what a cache changes is the
	// updates one input record makes of one window or key, which it
	// coalesces (compare's -cache-bytes runs every scenario with one).
	CacheBytes int64 `json:"cache_bytes,omitempty"`

	Dir string `json:"-"` // directory of the scenario
}

// Input is an input topic with how to generate its records.
type Input struct {
	Name  string `json:"name"`
	Key   string `json:"key"`   // "string" (the only key type the suite uses)
	Value string `json:"value"` // "int64", "string" or a record name of Records
	Table bool   `json:"table,omitempty"`
	// Keys is the key space: Prefix followed by 0..Count-1. Few keys make collisions, merges
	// and joins likely.
	Keys KeySpace `json:"keys"`
	// Values generates primitive values.
	Values *Field `json:"values,omitempty"`
	// Tombstones is the probability of a null value.
	Tombstones float64 `json:"tombstones,omitempty"`
	// Weight is how often this topic is chosen relative to the others (default 1).
	Weight float64 `json:"weight,omitempty"`
}

// Output is an output topic; Window is set when its key is windowed.
type Output struct {
	Name   string  `json:"name"`
	Key    string  `json:"key"`
	Value  string  `json:"value"`
	Window *Window `json:"window,omitempty"`
}

// Window says how a windowed key is encoded: "time" keys carry only the start on the wire,
// so the reader needs the size (for sliding windows: the time difference) to compute the end;
// "session" keys carry both ends (end inclusive).
type Window struct {
	Kind   string `json:"kind"`
	SizeMs int64  `json:"size_ms,omitempty"`
}

// KeySpace is Prefix0 .. Prefix<Count-1>.
type KeySpace struct {
	Prefix string `json:"prefix"`
	Count  int    `json:"count"`
}

// Field generates a primitive: an int64 in [Min, Max], or a string from Choices.
type Field struct {
	Type    string   `json:"type,omitempty"` // "int64" or "string"; defaults to the topic's value type
	Min     int64    `json:"min,omitempty"`
	Max     int64    `json:"max,omitempty"`
	Choices []string `json:"choices,omitempty"`
}

// Generator shapes a sequence. Time is a clock that starts in [0, StartMax] and advances by
// [0, StepMax] per record; a record is "disordered" (Disorder) when its timestamp is up to
// DisorderMax behind the clock, and "late" (Late) when it is LateMin..LateMax behind, far
// enough to fall outside windows and grace periods. Timestamps never go below 0.
type Generator struct {
	Records     [2]int  `json:"records"`
	StartMax    int64   `json:"start_max"`
	StepMax     int64   `json:"step_max"`
	Disorder    float64 `json:"disorder"`
	DisorderMax int64   `json:"disorder_max"`
	Late        float64 `json:"late"`
	LateMin     int64   `json:"late_min"`
	LateMax     int64   `json:"late_max"`
}

// Load reads and checks dir/scenario.json.
func Load(dir string) (*Scenario, error) {
	path := filepath.Join(dir, "scenario.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Scenario
	if err := strictUnmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	s.Dir = dir
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &s, nil
}

// LoadAll loads every scenario under root whose name matches the glob, sorted by name.
func LoadAll(root, glob string) ([]*Scenario, error) {
	if glob == "" {
		glob = "*"
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []*Scenario
	for _, e := range entries {
		if !e.IsDir() || e.Name() == SharedFuncsDir {
			continue
		}
		if ok, err := filepath.Match(glob, e.Name()); err != nil {
			return nil, fmt.Errorf("bad -scenarios glob %q: %v", glob, err)
		} else if !ok {
			continue
		}
		s, err := Load(filepath.Join(root, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

func (s *Scenario) check() error {
	if s.Name != filepath.Base(s.Dir) {
		return fmt.Errorf("name %q does not match the directory %q", s.Name, filepath.Base(s.Dir))
	}
	if s.CacheBytes < 0 {
		return fmt.Errorf("cache_bytes %d is negative", s.CacheBytes)
	}
	switch s.Order {
	case "":
		s.Order = "sequence"
	case "sequence", "multiset":
	default:
		return fmt.Errorf("order must be sequence or multiset, not %q", s.Order)
	}
	if len(s.Inputs) == 0 || len(s.Outputs) == 0 {
		return fmt.Errorf("needs at least one input and one output topic")
	}
	for _, in := range s.Inputs {
		if in.Key != "string" {
			return fmt.Errorf("input %q: key type must be string", in.Name)
		}
		if in.Keys.Count <= 0 {
			return fmt.Errorf("input %q: keys.count must be positive", in.Name)
		}
		switch in.Value {
		case "int64", "string":
			if in.Values == nil {
				return fmt.Errorf("input %q: primitive values need \"values\"", in.Name)
			}
			if err := in.Values.check(in.Value); err != nil {
				return fmt.Errorf("input %q: %v", in.Name, err)
			}
		default:
			rec, ok := s.Records[in.Value]
			if !ok {
				return fmt.Errorf("input %q: record %q is not in \"records\"", in.Name, in.Value)
			}
			for name, f := range rec {
				if err := f.check(f.Type); err != nil {
					return fmt.Errorf("record %q field %q: %v", in.Value, name, err)
				}
			}
		}
	}
	for _, out := range s.Outputs {
		if out.Window != nil && out.Window.Kind != "session" && (out.Window.Kind != "time" || out.Window.SizeMs <= 0) {
			return fmt.Errorf("output %q: window must be {\"kind\":\"session\"} or {\"kind\":\"time\",\"size_ms\":n>0}", out.Name)
		}
	}
	g := s.Generator
	if g.Records[0] < 1 || g.Records[1] < g.Records[0] {
		return fmt.Errorf("generator.records must be [min>=1, max>=min]")
	}
	if g.Late > 0 && (g.LateMin <= 0 || g.LateMax < g.LateMin) {
		return fmt.Errorf("generator: late records need 0 < late_min <= late_max")
	}
	if g.Disorder > 0 && g.DisorderMax <= 0 {
		return fmt.Errorf("generator: disorder needs disorder_max > 0")
	}
	return nil
}

func (f Field) check(typ string) error {
	switch typ {
	case "int64":
		if f.Max < f.Min {
			return fmt.Errorf("max < min")
		}
	case "string":
		if len(f.Choices) == 0 {
			return fmt.Errorf("string values need choices")
		}
	default:
		return fmt.Errorf("type must be int64 or string, not %q", typ)
	}
	return nil
}

// Generate returns sequences 1..n. Sequence i depends only on (seed, scenario name, i), so a
// sequence can be regenerated alone and a subset of scenarios sees the same inputs.
func (s *Scenario) Generate(seed uint64, n int) []replay.Sequence {
	h := fnv.New64a()
	h.Write([]byte(s.Name))
	base := h.Sum64() ^ seed
	seqs := make([]replay.Sequence, n)
	for i := range seqs {
		rng := rand.New(rand.NewPCG(base, uint64(i+1)))
		seqs[i] = replay.Sequence{N: i + 1, Records: s.sequence(rng)}
	}
	return seqs
}

func (s *Scenario) sequence(rng *rand.Rand) []replay.Record {
	g := s.Generator
	n := g.Records[0] + rng.IntN(g.Records[1]-g.Records[0]+1)
	clock := rng.Int64N(g.StartMax + 1)
	var total float64
	for _, in := range s.Inputs {
		total += in.weight()
	}
	recs := make([]replay.Record, 0, n)
	for range n {
		in := s.pick(rng, total)
		clock += rng.Int64N(g.StepMax + 1)
		ts := clock
		switch p := rng.Float64(); {
		case p < g.Late:
			ts -= g.LateMin + rng.Int64N(g.LateMax-g.LateMin+1)
		case p < g.Late+g.Disorder:
			ts -= 1 + rng.Int64N(g.DisorderMax)
		}
		rec := replay.Record{
			Topic:     in.Name,
			Key:       mustJSON(in.Keys.Prefix + strconv.Itoa(rng.IntN(in.Keys.Count))),
			Timestamp: max(ts, 0),
		}
		if rng.Float64() < in.Tombstones {
			rec.Value = json.RawMessage("null")
		} else {
			rec.Value = s.value(rng, in)
		}
		recs = append(recs, rec)
	}
	return recs
}

func (s *Scenario) pick(rng *rand.Rand, total float64) *Input {
	x := rng.Float64() * total
	for i := range s.Inputs {
		x -= s.Inputs[i].weight()
		if x < 0 {
			return &s.Inputs[i]
		}
	}
	return &s.Inputs[len(s.Inputs)-1]
}

func (in *Input) weight() float64 {
	if in.Weight <= 0 {
		return 1
	}
	return in.Weight
}

func (s *Scenario) value(rng *rand.Rand, in *Input) json.RawMessage {
	if in.Values != nil {
		return mustJSON(in.Values.gen(rng, in.Value))
	}
	rec := s.Records[in.Value]
	names := make([]string, 0, len(rec))
	for name := range rec {
		names = append(names, name)
	}
	sort.Strings(names) // map order must not leak into the random stream
	obj := make(map[string]any, len(rec))
	for _, name := range names {
		f := rec[name]
		obj[name] = f.gen(rng, f.Type)
	}
	return mustJSON(obj)
}

func (f Field) gen(rng *rand.Rand, typ string) any {
	if typ == "string" {
		return f.Choices[rng.IntN(len(f.Choices))]
	}
	return f.Min + rng.Int64N(f.Max-f.Min+1)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
