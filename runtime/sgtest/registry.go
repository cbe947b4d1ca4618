package sgtest

import (
	"context"

	"github.com/streamgen/streamgen/runtime/sgregistry"
	"github.com/streamgen/streamgen/serdes"
)

// BindRegistry binds the registry serdes of an app (the generated
// registrySerdes) to the process's in-memory schema registry
// (sgregistry.Shared), registering their schemas: the test driver runs
// avro, protobuf and jsonschema topics without a registry server, as a
// TopologyTestDriver test does with Confluent's mock:// URL. The framing
// is the real Confluent wire format; the registry checks no compatibility
// rule. Generated NewTestDriver calls it.
func BindRegistry(binders ...serdes.RegistryBinder) error {
	return sgregistry.Bind(context.Background(), sgregistry.Shared(), true, binders)
}
