package spec

import _ "embed"

// SchemaJSON is the JSON Schema (draft 2020-12) of the spec format, for
// editors and `streamgen schema`. It checks the shape of a spec (keys,
// value kinds, enumerations); Parse checks everything else (types,
// references, topology shapes).
//
//go:embed schema.json
var SchemaJSON []byte
