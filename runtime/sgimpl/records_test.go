package sgimpl

import (
	"errors"
	"testing"

	"github.com/streamgen/streamgen/serdes"
)

// pair decodes like a generated record with a gap in its field IDs: 1 "a"
// (string) and 3 "c" (int64).
type pair struct {
	A string
	C int64
}

var pairFields = Fields{1: "a", 3: "c"}

func (p *pair) decode(b []byte, depth int) ([]byte, error) {
	*p = pair{C: 7}
	return DecodeRecord(b, depth, pairFields, func(id int, b []byte) (_ []byte, err error) {
		switch id {
		case 1:
			p.A, b, err = serdes.ReadString(b)
		case 3:
			p.C, b, err = serdes.ReadInt64(b)
		}
		return b, err
	})
}

func TestDecodeRecordKeys(t *testing.T) {
	b := serdes.AppendMapHeader(nil, 5)
	b = serdes.AppendString(serdes.AppendInt64(b, 1), "x")       // by ID
	b = serdes.AppendString(serdes.AppendInt64(b, 2), "skipped") // the gap: no field
	b = serdes.AppendNil(serdes.AppendString(b, "c"))            // nil: C keeps its default
	b = serdes.AppendBool(serdes.AppendString(b, "zz"), true)    // unknown name
	b = serdes.AppendString(serdes.AppendBool(b, true), "other") // a key of another type
	b = append(b, 0xff)
	var p pair
	rest, err := p.decode(b, 0)
	if err != nil || p != (pair{A: "x", C: 7}) || len(rest) != 1 {
		t.Fatalf("got %+v, rest %x, err %v", p, rest, err)
	}
	b = serdes.AppendInt64(serdes.AppendString(serdes.AppendMapHeader(nil, 1), "c"), 9)
	if _, err := p.decode(b, 0); err != nil || p != (pair{C: 9}) {
		t.Fatalf("by name: got %+v, err %v", p, err)
	}
}

func TestDecodeRecordErrors(t *testing.T) {
	b := serdes.AppendMapHeader(nil, 2)
	b = serdes.AppendString(serdes.AppendInt64(b, 1), "x")
	b = serdes.AppendString(serdes.AppendInt64(b, 3), "not an int")
	var p pair
	rest, err := p.decode(b, 0)
	var de *serdes.DecodeError
	if !errors.As(err, &de) || de.Path != "c" || de.Offset != 5 || len(rest) != len(b) {
		t.Fatalf("got %v (rest %d of %d), want path c at offset 5 and all of b back", err, len(rest), len(b))
	}
	// Below the top, errors are not located yet: the enclosing decoder does it.
	if _, err = p.decode(b, 1); !errors.As(err, &de) || de.Offset != -1 {
		t.Fatalf("nested: got %v, want an unlocated error", err)
	}
	if _, err = p.decode(b, serdes.MaxDepth+1); err == nil {
		t.Fatal("no error past serdes.MaxDepth")
	}
}

func TestDecodeRecordAllocs(t *testing.T) {
	b := serdes.AppendInt64(serdes.AppendInt64(serdes.AppendMapHeader(nil, 1), 3), 5)
	var p pair
	if n := testing.AllocsPerRun(100, func() { _, _ = p.decode(b, 0) }); n != 0 {
		t.Errorf("%v allocs per decode, want 0", n)
	}
}
