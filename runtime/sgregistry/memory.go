package sgregistry

import (
	"context"
	"fmt"
	"sync"

	"github.com/streamgen/streamgen/serdes"
)

// Memory is a schema registry inside the process, for the test driver,
// replay and run --embedded: what Confluent's mock:// URLs are to a
// TopologyTestDriver test. It assigns ids as a registry does (the same
// schema text gets the same id under every subject) and writes the same
// wire format, but it checks no compatibility rule and forgets everything
// when the process ends. It is never a stand-in for a real registry in a
// test that claims to test one.
type Memory struct {
	mu       sync.Mutex
	ids      map[serdes.Schema]int
	schemas  []serdes.Schema         // by id-1
	subjects map[string]map[int]bool // subject → ids registered under it
}

// NewMemory returns an empty in-memory registry.
func NewMemory() *Memory {
	return &Memory{ids: map[serdes.Schema]int{}, subjects: map[string]map[int]bool{}}
}

var (
	sharedOnce sync.Once
	shared     *Memory
)

// Shared is the process's in-memory registry: every test driver, replay
// and embedded run in one process binds to it, so serdes held in package
// variables of generated code get the same ids whichever binds them last.
func Shared() *Memory {
	sharedOnce.Do(func() { shared = NewMemory() })
	return shared
}

// SchemaID implements serdes.Registry.
func (m *Memory) SchemaID(_ context.Context, subject string, s serdes.Schema, register bool) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.ids[s]
	if ok && m.subjects[subject][id] {
		return id, nil
	}
	if !register {
		return 0, fmt.Errorf("the in-memory registry does not hold this schema under the subject")
	}
	if !ok {
		m.schemas = append(m.schemas, s)
		id = len(m.schemas)
		m.ids[s] = id
	}
	if m.subjects[subject] == nil {
		m.subjects[subject] = map[int]bool{}
	}
	m.subjects[subject][id] = true
	return id, nil
}

// SchemaByID implements serdes.Registry.
func (m *Memory) SchemaByID(_ context.Context, id int) (serdes.Schema, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id < 1 || id > len(m.schemas) {
		return serdes.Schema{}, fmt.Errorf("unknown to the in-memory registry")
	}
	return m.schemas[id-1], nil
}

// AppendHeader implements serdes.Registry.
func (m *Memory) AppendHeader(dst []byte, id int, index []int) []byte {
	return appendHeader(dst, id, index)
}

// CutHeader implements serdes.Registry.
func (m *Memory) CutHeader(b []byte, protobuf bool) (int, []int, []byte, error) {
	return cutHeader(b, protobuf)
}

var _ serdes.Registry = (*Memory)(nil)

// Bind binds every serde to r, registering their schemas when register
// is set. The first failure is returned; it names topic and subject.
func Bind(ctx context.Context, r serdes.Registry, register bool, binders []serdes.RegistryBinder) error {
	for _, b := range binders {
		if err := b.BindRegistry(ctx, r, register); err != nil {
			return err
		}
	}
	return nil
}
