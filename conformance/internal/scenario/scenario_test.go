package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/conformance/internal/replay"
)

func loadAll(t *testing.T) []*Scenario {
	t.Helper()
	scs, err := LoadAll(filepath.Join("..", "..", "scenarios"), "*")
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) < 32 {
		t.Fatalf("%d scenarios, want at least 32", len(scs))
	}
	return scs
}

// Every scenario has all three halves: spec, Java twin, and (when the spec names Go
// functions) funcs.go behind the conformance build tag, so `go build ./...` skips scenario
// directories until their code is generated.
func TestScenariosAreComplete(t *testing.T) {
	// Scenarios.java registers every topology, some from files of their own
	// (WindowedKeyScenarios.java), so the names are looked for in them all.
	sources, err := filepath.Glob(filepath.Join("..", "..", "java", "src", "main", "java", "io", "streamgen", "conformance", "*Scenarios.java"))
	if err != nil || len(sources) == 0 {
		t.Fatalf("no Scenarios.java: %v", err)
	}
	var java []byte
	for _, src := range sources {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		java = append(java, b...)
	}
	for _, s := range loadAll(t) {
		spec, err := os.ReadFile(filepath.Join(s.Dir, "streamgen.yaml"))
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if !strings.Contains(string(spec), "package: main") || !strings.Contains(string(spec), "id: conf-"+s.Name+"\n") {
			t.Errorf("%s: streamgen.yaml must say package: main and app id conf-%s", s.Name, s.Name)
		}
		if !strings.Contains(string(java), `"`+s.Name+`"`) {
			t.Errorf("%s: no topology registered under that name in Scenarios.java", s.Name)
		}
		checkFuncs(t, s)
		for _, in := range s.Inputs {
			if !strings.Contains(string(spec), "\n  "+in.Name+": ") {
				t.Errorf("%s: input topic %q is not declared in streamgen.yaml", s.Name, in.Name)
			}
		}
	}
}

func TestGenerateIsDeterministicAndValid(t *testing.T) {
	for _, s := range loadAll(t) {
		a, b := s.Generate(7, 20), s.Generate(7, 20)
		if string(encode(t, a)) != string(encode(t, b)) {
			t.Fatalf("%s: same seed gave different sequences", s.Name)
		}
		if string(encode(t, a)) == string(encode(t, s.Generate(8, 20))) {
			t.Errorf("%s: seeds 7 and 8 gave the same sequences", s.Name)
		}
		topics := map[string]bool{}
		for i, seq := range a {
			if seq.N != i+1 {
				t.Fatalf("%s: sequence %d numbered %d", s.Name, i+1, seq.N)
			}
			n := len(seq.Records)
			if n < s.Generator.Records[0] || n > s.Generator.Records[1] {
				t.Errorf("%s: sequence %d has %d records, want %v", s.Name, seq.N, n, s.Generator.Records)
			}
			for _, r := range seq.Records {
				topics[r.Topic] = true
				if r.Timestamp < 0 {
					t.Errorf("%s: negative timestamp", s.Name)
				}
				var key string
				if err := json.Unmarshal(r.Key, &key); err != nil {
					t.Errorf("%s: key %s is not a string", s.Name, r.Key)
				}
			}
		}
		for _, in := range s.Inputs {
			if !topics[in.Name] {
				t.Errorf("%s: 20 sequences never used input %q", s.Name, in.Name)
			}
		}
	}
}

func TestGeneratorShapesTime(t *testing.T) {
	s := &Scenario{
		Name:    "t",
		Inputs:  []Input{{Name: "events", Key: "string", Value: "int64", Keys: KeySpace{"k", 2}, Values: &Field{Min: 0, Max: 3}, Tombstones: 0.5}},
		Outputs: []Output{{Name: "out", Key: "string", Value: "int64"}},
		Generator: Generator{Records: [2]int{200, 200}, StartMax: 0, StepMax: 100,
			Late: 0.2, LateMin: 10_000, LateMax: 10_000},
	}
	seq := s.Generate(1, 1)[0].Records
	late, tombstones, maxTS := 0, 0, int64(0)
	for _, r := range seq {
		if r.Timestamp+5_000 < maxTS {
			late++
		}
		maxTS = max(maxTS, r.Timestamp)
		if string(r.Value) == "null" {
			tombstones++
		}
	}
	if late < 10 || late > 80 {
		t.Errorf("%d of 200 records late, want about 40", late)
	}
	if tombstones < 60 || tombstones > 140 {
		t.Errorf("%d of 200 tombstones, want about 100", tombstones)
	}
}

func encode(t *testing.T, seqs []replay.Sequence) []byte {
	t.Helper()
	var b strings.Builder
	if err := replay.Write(&b, seqs); err != nil {
		t.Fatal(err)
	}
	return []byte(b.String())
}

// checkFuncs checks that a scenario has its own funcs.go or names a shared
// one that exists, not both, and that the file is behind the conformance tag.
func checkFuncs(t *testing.T, s *Scenario) {
	t.Helper()
	own := filepath.Join(s.Dir, "funcs.go")
	path := own
	if s.Funcs != "" {
		if _, err := os.Stat(own); err == nil {
			t.Errorf("%s: has a funcs.go and names shared funcs %q: keep one", s.Name, s.Funcs)
		}
		path = filepath.Join(s.Dir, "..", SharedFuncsDir, s.Funcs+".go")
	}
	funcs, err := os.ReadFile(path)
	switch {
	case err != nil && s.Funcs != "":
		t.Errorf("%s: shared funcs %q: %v", s.Name, s.Funcs, err)
	case err == nil && !strings.HasPrefix(string(funcs), "//go:build conformance\n"):
		t.Errorf("%s: %s must start with //go:build conformance", s.Name, path)
	}
}
