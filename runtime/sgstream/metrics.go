package sgstream

// Per-node counters for the engine's metrics. Each node's output fanout
// counts the records it forwards with a plain increment: the task's
// goroutine is the only one that touches it, so the hot path pays one add
// per record and node, no atomic and no lock. The engine reads the counts
// on that same goroutine (ForwardCounts) and publishes them for scrapes.

// nodeCounter is the forward counter of one node of a task.
type nodeCounter struct {
	node *nodeInfo
	n    *int64
}

// countForwards registers n as the forward counter of node info. Only the
// first output of a node counts: a node with two outputs chained one into
// the other (a repartition source feeding a grouped table) would otherwise
// count each record twice. Builders that only describe the topology count
// nothing.
func (b *Builder) countForwards(info *nodeInfo, n *int64) {
	if b.task == nil || info == nil {
		return
	}
	for _, c := range b.counters {
		if c.node.ID == info.ID {
			return
		}
	}
	b.counters = append(b.counters, nodeCounter{node: info, n: n})
}

// forwarding returns the counters of the nodes of this task's
// sub-topology: a task builds the whole topology, but only its own
// sub-topology's nodes see records.
func (t *task) forwarding() []nodeCounter {
	if t.fwd == nil {
		t.fwd = []nodeCounter{}
		for _, c := range t.b.counters {
			if n := t.topo.nodes[c.node.ID]; n.Sub == t.id.Sub {
				t.fwd = append(t.fwd, nodeCounter{node: n, n: c.n})
			}
		}
	}
	return t.fwd
}

// ForwardingNodes returns the nodes of the task that forward records to
// other nodes (every node but sinks and terminal operators), in the order
// of ForwardCounts.
func (t *task) ForwardingNodes() []*nodeInfo {
	fwd := t.forwarding()
	out := make([]*nodeInfo, len(fwd))
	for i, c := range fwd {
		out[i] = c.node
	}
	return out
}

// ForwardCounts appends to dst how many records each node of
// ForwardingNodes forwarded since the task was created: for a source node
// the records it decoded, for a filter those it kept, for a flat map every
// record it emitted. Call it on the goroutine that processes the task.
func (t *task) ForwardCounts(dst []int64) []int64 {
	for _, c := range t.forwarding() {
		dst = append(dst, *c.n)
	}
	return dst
}

// DropLate counts a record dropped because the window it belongs to had
// already closed (stream time past its end plus grace): Kafka Streams'
// dropped-records of an expired window. It counts in Dropped too.
func (t *task) DropLate() {
	t.stats.Dropped++
	t.stats.Late++
}
