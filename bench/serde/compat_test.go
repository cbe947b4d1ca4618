package serde

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/streamgen/streamgen/bench/serde/msgpcompare"
	"github.com/streamgen/streamgen/serdes"
	"github.com/vmihailenco/msgpack/v5"
)

// A generic msgpack decoder reads our records: a map keyed by field ID,
// timestamps as integer milliseconds, enums as integers.
func TestCompatOurBytesWithMsgpackV5(t *testing.T) {
	o := sampleOrder()
	dec := msgpack.NewDecoder(bytes.NewReader(o.AppendMsg(nil)))
	dec.UseLooseInterfaceDecoding(true)
	dec.SetMapDecoder(func(d *msgpack.Decoder) (any, error) { return d.DecodeUntypedMap() })
	v, err := dec.DecodeInterfaceLoose()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := v.(map[any]any)
	field := func(id uint64) any { return norm(got[int64(id)]) }
	if field(1) != o.ID || field(2) != o.UserID || field(3) != o.Amount {
		t.Errorf("scalars: %#v", got)
	}
	if field(4) != o.PlacedAt.UnixMilli() {
		t.Errorf("placed_at = %#v, want %d ms", field(4), o.PlacedAt.UnixMilli())
	}
	if field(6) != *o.Note || field(8) != int64(StatusPaid) || field(10) != int64(7) {
		t.Errorf("note/status/version: %#v %#v %#v", field(6), field(8), field(10))
	}
	items, _ := field(5).([]any)
	if len(items) != 3 || items[2].(map[any]any)[int64(1)] != "sku-cheese-7" {
		t.Errorf("items = %#v", field(5))
	}
	tags, _ := field(7).(map[any]any)
	if norm(tags["priority"]) != int64(-1) || norm(tags["campaign"]) != int64(42) {
		t.Errorf("tags = %#v", field(7))
	}
	if ship, _ := field(9).(map[any]any); ship[int64(2)] != "Cupertino" {
		t.Errorf("shipping = %#v", field(9))
	}
}

// norm makes integers comparable whatever width the decoder chose.
func norm(v any) any {
	switch x := v.(type) {
	case uint64:
		return int64(x)
	case int8, int16, int32, uint8, uint16, uint32:
		return reflect.ValueOf(x).Convert(reflect.TypeFor[int64]()).Interface()
	}
	return v
}

// msgpack/v5's reflective encoding of a struct tagged with the spec names
// (string keys, its own integer widths, time.Time as the timestamp
// extension, nil for an absent optional) decodes with ours.
func TestCompatMsgpackV5StructDecodes(t *testing.T) {
	peer := samplePeer()
	peer.PlacedAt = peer.PlacedAt.Add(123 * time.Microsecond) // sub-millisecond precision survives the extension
	b, err := msgpack.Marshal(peer)
	if err != nil {
		t.Fatal(err)
	}
	var got Order
	if _, err := got.UnmarshalMsg(b); err != nil {
		t.Fatal(err)
	}
	want := sampleOrder()
	want.PlacedAt = peer.PlacedAt
	if !reflect.DeepEqual(&got, want) {
		t.Errorf("decoded msgpack/v5 struct:\n got %+v\nwant %+v", got, *want)
	}
	peer.Note = nil
	b, _ = msgpack.Marshal(peer)
	if _, err := got.UnmarshalMsg(b); err != nil || got.Note != nil {
		t.Errorf("nil optional: %v, %v", got.Note, err)
	}
	// A map written field by field, as a Python dict would be, with a key
	// this schema does not know.
	b, _ = msgpack.Marshal(map[string]any{"id": "py-1", "amount": 2, "unknown": []any{1, "x"}, "status": 2})
	if _, err := got.UnmarshalMsg(b); err != nil || got.ID != "py-1" || got.Amount != 2 || got.Status != StatusShipped {
		t.Errorf("python-style map: %+v, %v", got, err)
	}
}

func TestDecodeErrorPath(t *testing.T) {
	o := sampleOrder()
	good := o.AppendMsg(nil)
	// Replace the third item's sku (a string) with a bool.
	sku := serdes.AppendString(nil, "sku-cheese-7")
	i := bytes.Index(good, sku)
	bad := append(append(append([]byte{}, good[:i]...), 0xc3), good[i+len(sku):]...)
	_, err := new(Order).UnmarshalMsg(bad)
	var de *serdes.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, serdes.ErrDecode) {
		t.Fatalf("err = %v", err)
	}
	if de.Path != "items[2].sku" || de.Offset != i {
		t.Errorf("path %q offset %d, want items[2].sku at %d", de.Path, de.Offset, i)
	}
	s := serdes.Msgpack[Order]()
	if _, err := s.Decode(bad); err == nil || err.Error() != de.Error() {
		t.Errorf("Msgpack serde error = %v", err)
	}
}

// Decoding through the runtime's serde agrees with UnmarshalMsg, and a nil
// record is a tombstone both ways.
func TestMsgpackSerde(t *testing.T) {
	s := serdes.Serde[*Order](serdes.Msgpack[Order]())
	b, err := s.Append(nil, sampleOrder())
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Decode(b)
	if err != nil || !reflect.DeepEqual(got, sampleOrder()) {
		t.Errorf("Decode = %+v, %v", got, err)
	}
	var none *Order
	if !none.IsNil() {
		t.Errorf("IsNil on a nil *Order = false")
	}
	var _ msgpcompare.Order
}
