package sgstream

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/streamgen/streamgen/serdes"
)

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

// windowedOut writes a windowed table's updates to topic with the key
// rendered "key@start" and a null aggregate as a tombstone.
func windowedOut(tbl Table[Windowed[string], string], name, topic string) {
	rekeyed := Map(Nullable(ToStream(tbl, name+"-stream")), name+"-rekey", func(k Windowed[string], v *string) (string, *string) {
		return k.Key + "@" + strconv.FormatInt(k.Start, 10), v
	})
	To(NonNullable(rekeyed), name, topic, strSink())
}

// showNil renders a value a user function saw: "nil" for a null.
func showNil(v *string) string {
	if v == nil {
		return "nil"
	}
	return *v
}

// The functions Kafka Streams hands a null value get nil: a stream
// group_by's key selector (the count after it then drops the record), a
// time-windowed aggregator, and a topic chooser, which writes a tombstone.
func TestNullableGroupByAggregateAndChooser(t *testing.T) {
	var selected []string
	d := newTDrv(t, func(b *Builder) {
		s := Nullable(Source(b, "src", strSrc("in")))
		g := GroupByNullable(s, "by", func(k string, v *string) string {
			selected = append(selected, showNil(v))
			return "g"
		}, serdes.String, serdes.String)
		To(ToStream(Count(g, "count", "counts"), "counted"), "count-out", "counts", i64Sink())
		w := WindowedBy(GroupByKey(NonNullable(s), serdes.String, serdes.String), "w", TimeWindows{Size: 10 * time.Millisecond})
		agg := AggregateWindowedNullable(w, "agg", "agg-store", EmitOnUpdate, func() string { return "" },
			func(_ string, v *string, agg string) string { return agg + "[" + showNil(v) + "]" }, serdes.String)
		windowedOut(agg, "agg-out", "aggs")
		ToDynamicNullable(s, "route", func(_ string, v *string) string {
			if v == nil {
				return "nulls"
			}
			return "values"
		}, []string{"nulls", "values"}, strSink())
	})
	d.pipeS("in", "a", "0", 1)
	d.pipeS("in", "a", nullStr, 2)
	d.pipeS("in", "a", "", 3)
	if want := []string{"0", "nil", ""}; !slices.Equal(selected, want) {
		t.Errorf("key selector saw %q, want %q", selected, want)
	}
	wantOut(t, d.outS("counts", decI64), "g=1@1", "g=2@3")
	wantOut(t, d.outS("aggs", nil), "a@0=[0]@1", "a@0=[0][nil]@2", "a@0=[0][nil][]@3")
	wantOut(t, d.outS("nulls", nil), "a=null@2")
	wantOut(t, d.outS("values", nil), "a=0@1", "a=@3")
}

// A windowed reduce over pointers: a null first value is a null aggregate
// (a tombstone downstream, as Kafka's aggregatorForReducer keeps the first
// value), a later null reaches the reducer as nil, and a nil result
// deletes the window's row, so the next value starts it again.
func TestReduceWindowedNullable(t *testing.T) {
	var seen []string
	d := newTDrv(t, func(b *Builder) {
		g := GroupByKey(Source(b, "src", strSrc("in")), serdes.String, serdes.String)
		r := ReduceWindowedNullable(WindowedBy(g, "w", TimeWindows{Size: 10 * time.Millisecond}), "reduce", "r-store", EmitOnUpdate,
			func(agg, v *string) *string {
				seen = append(seen, *agg+"<-"+showNil(v))
				if v == nil {
					return nil
				}
				s := *agg + "+" + *v
				return &s
			})
		windowedOut(r, "out", "out")
	})
	d.pipeS("in", "a", nullStr, 1)
	d.pipeS("in", "a", "x", 2)
	d.pipeS("in", "a", "y", 3)
	d.pipeS("in", "a", nullStr, 4)
	d.pipeS("in", "a", "z", 5)
	wantOut(t, d.outS("out", nil), "a@0=null@1", "a@0=x@2", "a@0=x+y@3", "a@0=null@4", "a@0=z@5")
	if want := []string{"x<-y", "x+y<-nil"}; !slices.Equal(seen, want) {
		t.Errorf("reducer saw %q, want %q", seen, want)
	}
}

// A session reduce and aggregate over pointers see the null values a
// session aggregation takes (Kafka skips only null keys there); the second
// record merges the first's session, which leaves as a tombstone at its
// own end.
func TestSessionNullable(t *testing.T) {
	d := newTDrv(t, func(b *Builder) {
		g := GroupByKey(Source(b, "src", strSrc("in")), serdes.String, serdes.String)
		w := WindowedBySession(g, "w", SessionWindows{Gap: 10 * time.Millisecond})
		r := ReduceSessionNullable(w, "reduce", "r-store", EmitOnUpdate, func(agg, v *string) *string {
			s := *agg + "+" + showNil(v)
			return &s
		})
		windowedOut(r, "reduced", "reduced")
		a := AggregateSessionNullable(w, "agg", "a-store", EmitOnUpdate, func() string { return "" },
			func(_ string, v *string, agg string) string { return agg + "[" + showNil(v) + "]" },
			func(_ string, a, b string) string { return a + b }, serdes.String)
		windowedOut(a, "aggs", "aggs")
	})
	d.pipeS("in", "a", "x", 1)
	d.pipeS("in", "a", nullStr, 2)
	wantOut(t, d.outS("reduced", nil), "a@1=x@1", "a@1=null@1", "a@1=x+nil@2")
	wantOut(t, d.outS("aggs", nil), "a@1=[x]@1", "a@1=null@1", "a@1=[x][nil]@2")
}

// A cogroup's aggregator over pointers sees nil under time windows and is
// not called under the plain aggregation, which drops the null value.
func TestCogroupNullable(t *testing.T) {
	var plain []string
	d := newTDrv(t, func(b *Builder) {
		g := GroupByKey(Source(b, "src", strSrc("in")), serdes.String, serdes.String)
		add := func(_ string, v *string, agg string) string { return agg + "[" + showNil(v) + "]" }
		w := CogroupWindowedAggregate(CogroupNullable(g, add), "w", "w-store", TimeWindows{Size: 10 * time.Millisecond},
			func() string { return "" }, serdes.String)
		windowedOut(w, "windowed", "windowed")
		c := CogroupAggregate(CogroupNullable(g, func(k string, v *string, agg string) string {
			plain = append(plain, showNil(v))
			return add(k, v, agg)
		}), "c", "c-store", func() string { return "" }, serdes.String)
		To(ToStream(c, "c-stream"), "plain", "plain", strSink())
	})
	d.pipeS("in", "a", "x", 1)
	d.pipeS("in", "a", nullStr, 2)
	wantOut(t, d.outS("windowed", nil), "a@0=[x]@1", "a@0=[x][nil]@2")
	wantOut(t, d.outS("plain", nil), "a=[x]@1")
	if want := []string{"x"}; !slices.Equal(plain, want) {
		t.Errorf("plain cogroup aggregator saw %q, want %q", plain, want)
	}
}
