module example.com/myorders

go 1.26.0

require github.com/streamgen/streamgen v0.0.0-00010101000000-000000000000

// The generator, pinned to the version required above: `go tool streamgen`
// (what //go:generate runs) builds it once and caches it.
tool github.com/streamgen/streamgen/cmd/streamgen

// A local checkout of streamgen; delete this line to use the released version above.
replace github.com/streamgen/streamgen => ../streamgen
