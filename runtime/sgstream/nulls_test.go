package sgstream

import "testing"

// A table's deletes reach a mapper over the pointer view as nil; a mapper
// that passes its value on writes a tombstone again, one that returns a
// value writes it, and FilterNotNull drops the nulls of the plain view.
func TestNullableViewKeepsTombstones(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		tb := TableSource(b, "users", strSrc("users"), "users-store")
		s := Nullable(ToStream(tb, "users-stream"))
		passed := MapValues(s, "pass", func(_ string, v *string) *string { return v })
		To(NonNullable(passed), "sink", "out", strSink())
		marked := MapValues(s, "mark", func(_ string, v *string) *string {
			if v == nil {
				m := "was-null"
				return &m
			}
			return v
		})
		To(NonNullable(marked), "sink2", "out2", strSink())
		To(FilterNotNull(NonNullable(s), "present"), "sink3", "out3", strSink())
	})
	d.pipeS("users", "a", "1", 10)
	d.pipeS("users", "a", nullStr, 20)
	d.pipeS("users", "b", "", 21) // an empty string is a value, not a null
	wantOut(t, d.outS("out", nil), "a=1@10", "a=null@20", "b=@21")
	wantOut(t, d.outS("out2", nil), "a=1@10", "a=was-null@20", "b=@21")
	wantOut(t, d.outS("out3", nil), "a=1@10", "b=@21")
}

// A nil pointer to a plain value is null; a non-nil one, and plain values,
// are not.
func TestIsNullPointers(t *testing.T) {
	x := int64(0)
	if !isNull[*int64](nil) || isNull(&x) || isNull(int64(0)) || isNull("") {
		t.Fatal("isNull: want true only for the nil *int64")
	}
}
