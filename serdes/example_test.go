package serdes_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/streamgen/streamgen/serdes"
)

// The primitive serdes write the bytes of Kafka's Java serializers, so keys
// and values round-trip with Java producers and consumers.
func Example() {
	b, _ := serdes.Int64.Append(nil, 42)
	fmt.Printf("int64 42: % x\n", b)
	n, _ := serdes.Int64.Decode(b)
	fmt.Println("decoded:", n)

	s, _ := serdes.String.Append(nil, "héllo")
	fmt.Printf("string: % x\n", s)
	str, _ := serdes.String.Decode(s)
	fmt.Println("decoded:", str)

	ts, _ := serdes.Timestamp.Append(nil, time.UnixMilli(1_700_000_000_000))
	t, _ := serdes.Timestamp.Decode(ts)
	fmt.Println("timestamp:", t.Format(time.RFC3339))

	// A fixed-width value of the wrong length is a decode error.
	_, err := serdes.Int64.Decode([]byte{1, 2, 3})
	fmt.Println("short int64 is ErrDecode:", errors.Is(err, serdes.ErrDecode))
	// Output:
	// int64 42: 00 00 00 00 00 00 00 2a
	// decoded: 42
	// string: 68 c3 a9 6c 6c 6f
	// decoded: héllo
	// timestamp: 2023-11-14T22:13:20Z
	// short int64 is ErrDecode: true
}

// Generated record code is built from the append-style msgpack
// primitives: a record is a map keyed by field id.
func ExampleAppendMapHeader() {
	var b []byte
	b = serdes.AppendMapHeader(b, 2)
	b = serdes.AppendUint64(b, 1) // field id 1
	b = serdes.AppendString(b, "o1")
	b = serdes.AppendUint64(b, 3) // field id 3
	b = serdes.AppendFloat64(b, 12.5)
	fmt.Printf("% x\n", b)

	n, rest, _ := serdes.ReadMapHeader(b)
	for range n {
		var id int
		id, _, rest, _ = serdes.ReadKey(rest)
		switch id {
		case 1:
			var s string
			s, rest, _ = serdes.ReadString(rest)
			fmt.Println("field 1:", s)
		case 3:
			var f float64
			f, rest, _ = serdes.ReadFloat64(rest)
			fmt.Println("field 3:", f)
		}
	}
	// Output:
	// 82 01 a2 6f 31 03 cb 40 29 00 00 00 00 00 00
	// field 1: o1
	// field 3: 12.5
}
