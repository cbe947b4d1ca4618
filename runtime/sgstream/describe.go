package sgstream

import (
	"github.com/streamgen/streamgen/internal/topodesc"
	"github.com/streamgen/streamgen/internal/topograph"
)

// Ops the description treats specially (nodeInfo.Op).
const (
	opSink              = topograph.OpSink
	opDynamicSink       = topograph.OpDynamicSink
	opTableSource       = topograph.OpTableSource
	opGlobalTableSource = topograph.OpGlobalTableSource
)

// dynamicSinkExtractor is what the description prints for the topic of a
// sink whose topic is chosen per record.
const dynamicSinkExtractor = topograph.DynamicSinkExtractor

// tableSourceSuffix names the processor that materializes a table source.
const tableSourceSuffix = topograph.TableSourceSuffix

// Describe is the topology as Kafka Streams' Topology#describe shows it,
// rendered from the graph this topology runs (topograph.Graph.Describe): the
// same sub-topologies with the same numbers (which are the sub-topology
// part of the task ids) and the same nodes. A generated binary's
// `describe` renders it, and `streamgen describe`, which builds the same
// graph through the same layouts, renders the same (golden tests compare
// them).
func (h *Topology) Describe() *topodesc.Graph { return h.engine().Describe() }

// Describe implements engine.Topology.
func (tp *topology) Describe() *topodesc.Graph { return tp.graph.Describe() }
