package serde

import (
	"testing"
	"time"

	"github.com/streamgen/streamgen/bench/serde/msgpcompare"
	"github.com/vmihailenco/msgpack/v5"
)

// The same data for each implementation: 3 items, 3 tags, a note.
var placedAt = time.UnixMilli(1717171717171).UTC()

func sampleOrder() *Order {
	note := "leave at the door"
	return &Order{
		ID: "ord-000123456", UserID: "user-98765", Amount: 129.95, PlacedAt: placedAt,
		Items: []Item{
			{SKU: "sku-apple-001", Qty: 3, Price: 1.25},
			{SKU: "sku-bread-042", Qty: 1, Price: 3.5},
			{SKU: "sku-cheese-7", Qty: 2, Price: 12.99},
		},
		Note:     &note,
		Tags:     map[string]int64{"campaign": 42, "channel": 3, "priority": -1},
		Status:   StatusPaid,
		Shipping: Address{Street: "1 Infinite Loop", City: "Cupertino", Zip: "95014"},
		Version:  7,
	}
}

func samplePeer() *msgpcompare.Order {
	o := sampleOrder()
	p := &msgpcompare.Order{
		ID: o.ID, UserID: o.UserID, Amount: o.Amount, PlacedAt: o.PlacedAt, Note: o.Note, Tags: o.Tags,
		Status: int32(o.Status), Version: o.Version,
		Shipping: msgpcompare.Address{Street: o.Shipping.Street, City: o.Shipping.City, Zip: o.Shipping.Zip},
	}
	for _, it := range o.Items {
		p.Items = append(p.Items, msgpcompare.Item{SKU: it.SKU, Qty: it.Qty, Price: it.Price})
	}
	return p
}

// Each implementation encodes into a reused buffer where its API allows
// (msgpack/v5's Marshal returns a new slice each call; that is its API) and
// decodes into a fresh value, as the runtime does for every record it reads.
type codec struct {
	name   string
	encode func(buf []byte) ([]byte, error)
	decode func(buf []byte) error
}

func codecs() []codec {
	o, p := sampleOrder(), samplePeer()
	return []codec{
		{"streamgen",
			func(buf []byte) ([]byte, error) { return o.AppendMsg(buf[:0]), nil },
			func(buf []byte) error { _, err := new(Order).UnmarshalMsg(buf); return err }},
		{"msgpackv5",
			func([]byte) ([]byte, error) { return msgpack.Marshal(p) },
			func(buf []byte) error { return msgpack.Unmarshal(buf, new(msgpcompare.Order)) }},
		{"tinylibmsgp",
			func(buf []byte) ([]byte, error) { return p.MarshalMsg(buf[:0]) },
			func(buf []byte) error { _, err := new(msgpcompare.Order).UnmarshalMsg(buf); return err }},
	}
}

// bench runs c: encode, decode or both once per iteration (the indirect
// calls cost the same for every codec). Besides ns/op it reports cpu-ns/op,
// the process CPU time per operation (GC included), which the load of other
// processes on a shared machine inflates far less than wall-clock time.
func (c codec) bench(b *testing.B, encode, decode bool) {
	buf, err := c.encode(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	start := processCPU()
	defer func() { b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op") }()
	for b.Loop() {
		if encode {
			if buf, err = c.encode(buf); err != nil {
				b.Fatal(err)
			}
		}
		if decode {
			if err := c.decode(buf); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func runAll(b *testing.B, cs []codec, encode, decode bool) {
	for _, c := range cs {
		b.Run(c.name, func(b *testing.B) { c.bench(b, encode, decode) })
	}
}

func BenchmarkRoundTrip(b *testing.B) { runAll(b, codecs(), true, true) }
func BenchmarkEncode(b *testing.B)    { runAll(b, codecs(), true, false) }
func BenchmarkDecode(b *testing.B)    { runAll(b, codecs(), false, true) }

// TestEncodeAllocs holds the acceptance criterion that encoding into a
// reused buffer allocates nothing.
func TestEncodeAllocs(t *testing.T) {
	o := sampleOrder()
	buf := o.AppendMsg(nil)
	if n := testing.AllocsPerRun(100, func() { buf = o.AppendMsg(buf[:0]) }); n != 0 {
		t.Errorf("AppendMsg: %v allocs, want 0", n)
	}
}
