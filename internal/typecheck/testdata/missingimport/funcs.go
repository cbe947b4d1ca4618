// This package imports a package that does not exist, which the fast path
// cannot resolve from export data: the full load must decide, and still
// report the missing user function at its spec line.
package missingimport

import "github.com/streamgen/streamgen/internal/typecheck/testdata/nope"

var _ = nope.X
