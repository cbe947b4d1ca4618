package serde

import (
	"bytes"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
)

// The avro format on the same record, side by side with
// github.com/hamba/avro/v2, the Avro library Go services use (reflection
// over avro struct tags, with codecs cached per schema and type), on the
// schema streamgen registers for Order (OrderAvroSchema, what `streamgen
// schema avro` prints for it). Run them in one process:
//
//	go test -run '^$' -bench Avro ./bench/serde/

// hambaOrder and its parts are the Order hamba/avro reads and writes: the
// same fields, the enum as its symbol (hamba's enums are strings or
// TextMarshalers, and Status is neither).
type hambaOrder struct {
	ID       string           `avro:"id"`
	UserID   string           `avro:"user_id"`
	Amount   float64          `avro:"amount"`
	PlacedAt time.Time        `avro:"placed_at"`
	Items    []hambaItem      `avro:"items"`
	Note     *string          `avro:"note"`
	Tags     map[string]int64 `avro:"tags"`
	Status   string           `avro:"status"`
	Shipping hambaAddress     `avro:"shipping"`
	Version  int64            `avro:"version"`
}

type hambaItem struct {
	SKU   string  `avro:"sku"`
	Qty   int32   `avro:"qty"`
	Price float64 `avro:"price"`
}

type hambaAddress struct {
	Street string `avro:"street"`
	City   string `avro:"city"`
	Zip    string `avro:"zip"`
}

// hambaAPI writes plain block counts, as streamgen (and Apache Avro's Java
// encoder) does: hamba's default prefixes every array and map block with
// its size in bytes, which is legal Avro but other bytes.
var hambaAPI = avro.Config{DisableBlockSizeHeader: true}.Freeze()

var hambaSchema = avro.MustParse(OrderAvroSchema)

func hambaSample(o *Order) *hambaOrder {
	h := &hambaOrder{
		ID: o.ID, UserID: o.UserID, Amount: o.Amount, PlacedAt: o.PlacedAt, Note: o.Note, Tags: o.Tags,
		Status: o.Status.String(), Version: o.Version,
		Shipping: hambaAddress{Street: o.Shipping.Street, City: o.Shipping.City, Zip: o.Shipping.Zip},
	}
	for _, it := range o.Items {
		h.Items = append(h.Items, hambaItem{SKU: it.SKU, Qty: it.Qty, Price: it.Price})
	}
	return h
}

// hambaEncode writes h with w, hamba's reusable writer (the reused-buffer
// path: Marshal would copy the bytes out each call).
func hambaEncode(w *avro.Writer, h *hambaOrder) ([]byte, error) {
	w.Reset(nil)
	w.WriteVal(hambaSchema, h)
	return w.Buffer(), w.Error
}

func avroCodecs() []codec {
	o := sampleOrder()
	h := hambaSample(o)
	w := avro.NewWriter(nil, 512, avro.WithWriterConfig(hambaAPI))
	return []codec{
		{"streamgen",
			func(buf []byte) ([]byte, error) { return o.AppendAvro(buf[:0]) },
			func(buf []byte) error { return new(Order).DecodeAvro(buf) }},
		{"hamba",
			func([]byte) ([]byte, error) { return hambaEncode(w, h) },
			func(buf []byte) error { return hambaAPI.Unmarshal(hambaSchema, buf, new(hambaOrder)) }},
	}
}

func BenchmarkAvroRoundTrip(b *testing.B) { runAll(b, avroCodecs(), true, true) }
func BenchmarkAvroEncode(b *testing.B)    { runAll(b, avroCodecs(), true, false) }
func BenchmarkAvroDecode(b *testing.B)    { runAll(b, avroCodecs(), false, true) }

// TestAvroEncodeAllocs holds the acceptance criterion that Avro encoding
// into a reused buffer allocates nothing.
func TestAvroEncodeAllocs(t *testing.T) {
	o := sampleOrder()
	buf, _ := o.AppendAvro(nil)
	if n := testing.AllocsPerRun(100, func() { buf, _ = o.AppendAvro(buf[:0]) }); n != 0 {
		t.Errorf("AppendAvro: %v allocs, want 0", n)
	}
}

// TestAvroSameBytesAsHamba checks that the benchmark compares like with
// like: for the same value both libraries write the same bytes, and each
// reads the other's. Byte equality is checked with a one-entry map, since
// hamba writes map entries in Go's random iteration order and streamgen in
// key order; the full sample is checked by reading across.
func TestAvroSameBytesAsHamba(t *testing.T) {
	w := avro.NewWriter(nil, 512, avro.WithWriterConfig(hambaAPI))
	one := sampleOrder()
	one.Tags = map[string]int64{"campaign": 42}
	for _, o := range []*Order{one, {}} {
		ours, err := o.AppendAvro(nil)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := hambaEncode(w, hambaSample(o))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("streamgen and hamba write different bytes:\n%x\n%x", ours, theirs)
		}
	}
	o := sampleOrder()
	ours, _ := o.AppendAvro(nil)
	var h hambaOrder
	if err := hambaAPI.Unmarshal(hambaSchema, ours, &h); err != nil {
		t.Fatalf("hamba cannot read streamgen's bytes: %v", err)
	}
	theirs, err := hambaEncode(w, &h)
	if err != nil {
		t.Fatal(err)
	}
	if len(theirs) != len(ours) {
		t.Errorf("hamba writes %d bytes, streamgen %d", len(theirs), len(ours))
	}
	var back Order
	if err := back.DecodeAvro(theirs); err != nil {
		t.Fatalf("streamgen cannot read hamba's bytes: %v", err)
	}
	if again, _ := back.AppendAvro(nil); !bytes.Equal(again, ours) {
		t.Errorf("the record did not survive hamba:\n%x\n%x", ours, again)
	}
}
