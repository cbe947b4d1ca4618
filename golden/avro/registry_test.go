package avro

import (
	"context"
	"encoding/binary"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/streamgen/streamgen/internal/registrytest"
	"github.com/streamgen/streamgen/runtime/sgregistry"
	"github.com/streamgen/streamgen/serdes"
)

// Schema evolution on the real schema registry (scripts/registry.sh): two
// versions of a subject registered by another service, records framed
// with each version's id, read by the generated decoder through the
// registry. The subject is this test's own, so it runs beside the other
// golden packages' registry tests.

const evolutionSubject = "streamgen-avro-golden-evolution-value"

// countingRegistry is the real registry client, counting the writer
// schemas fetched by id.
type countingRegistry struct {
	serdes.Registry
	fetches atomic.Int32
}

func (c *countingRegistry) SchemaByID(ctx context.Context, id int) (serdes.Schema, error) {
	c.fetches.Add(1)
	return c.Registry.SchemaByID(ctx, id)
}

// framed is b in the Confluent wire format under schema id.
func framed(id int, b []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), b...)
}

func TestRealRegistryReadsOlderAndNewerWriters(t *testing.T) {
	url := registrytest.URL(t)
	cl := registrytest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	registrytest.DeleteSubjects(t, evolutionSubject)
	defer registrytest.DeleteSubjects(t, evolutionSubject)
	for _, r := range cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatBackward}, evolutionSubject) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}

	// The other service registers version 1, then version 2, which the
	// registry's BACKWARD rule accepts: its new fields have defaults.
	newer := newerEverything(t)
	newerDefaults := strings.NewReplacer(`"name":"added_first","type":`, `"name":"added_first","default":{"by":"","tags":[]},"type":`,
		`"name":"added_middle","type":`, `"name":"added_middle","default":{},"type":`,
		`"name":"added_last","type":`, `"name":"added_last","default":null,"type":`).Replace(newer)
	var ids []int
	for i, text := range []string{olderEverything, newerDefaults} {
		s, err := cl.CreateSchema(ctx, evolutionSubject, sr.Schema{Schema: text, Type: sr.TypeAvro})
		if err != nil {
			t.Fatalf("registering version %d: %v", i+1, err)
		}
		ids = append(ids, s.ID)
	}
	if ids[0] == ids[1] {
		t.Fatalf("both versions have id %d", ids[0])
	}

	// The app's serde of a topic side on this subject, with the generated
	// codec. Its own schema is not registered, so it cannot write, but it
	// reads every writer's (as `consume` and a reading app do).
	client, err := sgregistry.New(sgregistry.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	reg := &countingRegistry{Registry: client}
	serde := serdes.NewRegistrySerde[*Everything](serdes.Avro[Everything](EverythingAvroSchema),
		serdes.Subject{Topic: strings.TrimSuffix(evolutionSubject, "-value")})
	if err := serde.BindRegistry(ctx, reg, false); err == nil || !strings.Contains(err.Error(), "does not hold this schema") {
		t.Fatalf("binding without the app's schema registered: %v", err)
	}

	older := framed(ids[0], hambaWrite(t, olderEverything, olderValue()))
	newest := framed(ids[1], hambaWrite(t, newerDefaults, newerValue(t)))
	wantNewer := streamgenSampleEverything(0)
	wantNewer.Status = StatusPending
	for i := 0; i < 3; i++ {
		got, err := serde.Decode(older)
		if err != nil || !reflect.DeepEqual(got, olderRead()) {
			t.Fatalf("version 1's record: %+v, %v", got, err)
		}
		got, err = serde.Decode(newest)
		if err != nil || !reflect.DeepEqual(got, &wantNewer) {
			t.Fatalf("version 2's record: %+v, %v", got, err)
		}
	}
	if n := reg.fetches.Load(); n != 2 {
		t.Errorf("%d schema fetches for 6 records of 2 ids, want 2 (one per id, then cached)", n)
	}

	// A cut record is a decode error past the 5 header bytes.
	_, err = serde.Decode(older[:len(older)-3])
	if de, ok := err.(*serdes.DecodeError); !ok || de.Path == "" || de.Offset < 5 {
		t.Errorf("a cut version 1 record: %v", err)
	}

	// Registering the app's own schema is a third version the rule
	// accepts; the serde then writes it and reads its own records
	// without resolution. (Apicurio stores the text with the namespaces
	// its enclosing record implies dropped, so it is compared by id.)
	if err := serde.BindRegistry(ctx, reg, true); err != nil {
		t.Fatalf("registering the generated schema after version 2: %v", err)
	}
	latest, err := cl.SchemaByVersion(ctx, evolutionSubject, -1)
	if err != nil || latest.Version != 3 {
		t.Fatalf("latest version %d (%v)", latest.Version, err)
	}
	sample := streamgenSampleEverything(0)
	own, err := serde.Append(nil, &sample)
	if err != nil || int(binary.BigEndian.Uint32(own[1:5])) != latest.ID {
		t.Fatalf("written with id % x, want %d (%v)", own[:5], latest.ID, err)
	}
	if got, err := serde.Decode(own); err != nil || !reflect.DeepEqual(got, &sample) {
		t.Errorf("own record read back: %v", err)
	}
}
