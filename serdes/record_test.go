package serdes

import (
	"errors"
	"testing"
)

// point is a hand-written record in the shape the generator emits, enough
// to test Msgpack without depending on gen.
type point struct{ X int64 }

func (p *point) AppendMsg(b []byte) []byte {
	if p == nil {
		return AppendNil(b)
	}
	b = AppendMapHeader(b, 1)
	b = AppendInt64(b, 1)
	return AppendInt64(b, p.X)
}

func (p *point) UnmarshalMsg(b []byte) ([]byte, error) {
	in := b
	n, b, err := ReadMapHeader(b)
	if err != nil {
		return in, Locate(err, in)
	}
	*p = point{}
	for ; n > 0; n-- {
		var id int
		id, _, b, err = ReadKey(b)
		if err == nil && id == 1 {
			p.X, b, err = ReadInt64(b)
			err = WrapField(err, "x")
		} else if err == nil {
			b, err = Skip(b)
		}
		if err != nil {
			return in, Locate(err, in)
		}
	}
	return b, nil
}

func (p *point) IsNil() bool { return p == nil }

func TestMsgpackSerde(t *testing.T) {
	s := Serde[*point](Msgpack[point]())
	b, err := s.Append(nil, &point{X: -7})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Decode(b)
	if err != nil || got == nil || got.X != -7 {
		t.Fatalf("Decode = %+v, %v", got, err)
	}
	b, _ = s.Append(nil, nil)
	if got, err := s.Decode(b); got != nil || err != nil {
		t.Errorf("nil record round trip = %v, %v", got, err)
	}
	if got, err := s.Decode(nil); got != nil || err != nil {
		t.Errorf("empty input = %v, %v", got, err)
	}
	good, _ := s.Append(nil, &point{X: 1})
	if _, err := s.Decode(append(good, 0x01)); !errors.Is(err, ErrDecode) {
		t.Errorf("trailing byte: %v", err)
	}
	bad := AppendString(AppendInt64(AppendMapHeader(nil, 1), 1), "no")
	_, err = s.Decode(bad)
	var de *DecodeError
	if !errors.As(err, &de) || de.Path != "x" || de.Offset != 2 {
		t.Errorf("bad field: %#v", err)
	}
}
