package engine

// The layout marker tells the changelogs streamgen alone can read from those
// Kafka Streams could have written. A store whose changelog layout is
// streamgen's own (StoreSpec.OwnLayout) stamps every changelog record,
// tombstones included, with the header LayoutHeader: LayoutVersion.
// Restoring such a store refuses a record without it, since that record
// was written by Kafka Streams under the same store name (a takeover of
// state streamgen cannot read) or by a streamgen release before the marker,
// and restoring it would not fail but read wrong values. Stores in Kafka
// Streams' layout carry no marker: Kafka Streams writes no headers on
// changelog records unless consistency vectors are enabled, and their
// changelogs stay interchangeable in both directions.
const (
	LayoutHeader  = "streamgen.layout"
	LayoutVersion = "1"
)

// ownLayoutHeaders is the marker every own-layout changelog record
// carries. One slice for all of them, so that marking costs no allocation;
// nothing may modify it.
var ownLayoutHeaders = []Header{{Key: LayoutHeader, Value: []byte(LayoutVersion)}}

// OwnLayoutHeaders returns the shared, read-only marker headers of an
// own-layout store's changelog records.
func OwnLayoutHeaders() []Header { return ownLayoutHeaders }

// IsLayoutMarker reports whether headers are exactly the marker, which a
// collector may then send as a shared constant instead of copying.
func IsLayoutMarker(headers []Header) bool {
	return len(headers) == 1 && headers[0].Key == LayoutHeader && string(headers[0].Value) == LayoutVersion
}
