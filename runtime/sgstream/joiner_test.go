package sgstream

import (
	"strconv"
	"testing"
	"time"

	"github.com/streamgen/streamgen/serdes"
)

// Joins of string values, whose zero value "" is also a value: the
// pointer adapters hand the joiner nil only for a missing side, so a
// present empty string prints as "" and a missing side as null.

func optStr(p *string) string {
	if p == nil {
		return "null"
	}
	return strconv.Quote(*p)
}

var optJoin = OptionalSides(func(_ string, l, r *string) string { return optStr(l) + "+" + optStr(r) })

func TestJoinStreamTableOptionalRight(t *testing.T) {
	d := newJDrv(t, func(b *Builder) {
		s := Source(b, "s", strSrc("s"))
		tb := TableSource(b, "t", strSrc("t"), "t-store")
		j := JoinStreamTable(s, tb, "j", LeftJoin,
			OptionalRight(func(_ string, l string, r *string) string { return l + "+" + optStr(r) }))
		To(j, "sink", "out", strSink())
	})
	d.pipe("t", "k", "", 1)
	d.pipe("s", "k", "A", 2)
	d.pipe("s", "other", "B", 3)
	d.expectOut(`k:A+""@2`, "other:B+null@3")
}

func TestJoinTablesOuterOptionalSides(t *testing.T) {
	d := newJDrv(t, func(b *Builder) {
		l := TableSource(b, "l", strSrc("l"), "l-store")
		r := TableSource(b, "r", strSrc("r"), "r-store")
		To(ToStream(JoinTables(l, r, "j", OuterJoin, optJoin, "", serdes.String), "j-stream"), "sink", "out", strSink())
	})
	d.pipe("l", "a", "", 1)
	d.pipe("r", "b", "", 2)
	d.pipe("r", "a", "x", 3)
	d.pipe("l", "a", jNull, 4)
	d.expectOut(`a:""+null@1`, `b:null+""@2`, `a:""+"x"@3`, `a:null+"x"@4`)
}

// An empty string is a value in the join's window stores too (it used to
// be stored as a nil value, that is not at all, and never matched), on
// memory and on Pebble.
func TestJoinStreamsOuterOptionalSides(t *testing.T) {
	for name, opts := range map[string][]DriverOpt{"memory": nil, "pebble": {StateDir(t.TempDir())}} {
		t.Run(name, func(t *testing.T) {
			d := newJDrv(t, func(b *Builder) {
				l := Source(b, "left", strSrc("left"))
				r := Source(b, "right", strSrc("right"))
				sd := StreamJoinSerdes[string, string, string]{Key: serdes.String, Left: serdes.String, Right: serdes.String}
				To(JoinStreams(l, r, "j", OuterJoin, JoinWindows{Before: ms(5), After: ms(5)}, optJoin, sd), "sink", "out", strSink())
			}, opts...)
			d.pipe("left", "a", "", 10)
			d.pipe("right", "b", "", 11)
			d.pipe("right", "a", "", 12)
			d.pipe("left", "z", "late", 30) // advances stream time past both windows
			d.expectOut(`a:""+""@12`, `b:null+""@11`)
		})
	}
}

// An empty string is a version of a versioned table, not a tombstone.
func TestJoinStreamVersionedTableEmptyValue(t *testing.T) {
	d := newJDrv(t, func(b *Builder) {
		s := Source(b, "s", strSrc("s"))
		tb := VersionedTableSource(b, "t", strSrc("t"), "t-store", 10*time.Millisecond)
		j := JoinStreamTable(s, tb, "j", LeftJoin,
			OptionalRight(func(_ string, l string, r *string) string { return l + "+" + optStr(r) }))
		To(j, "sink", "out", strSink())
	})
	d.pipe("t", "k", "", 1)
	d.pipe("s", "k", "A", 2)
	d.expectOut(`k:A+""@2`)
}
