package topograph

import "github.com/streamgen/streamgen/internal/toponame"

// FKJoin are the nodes of a foreign-key join (KIP-213), which runs as Kafka
// Streams' does: the left side registers subscriptions with the right side
// through the registration topic, the right side answers through the
// response topic, and each arrow is a processor, a sink and a source.
type FKJoin struct {
	RegTopic, RespTopic string // full names
	SubStore            string // the subscriptions, on the right side

	Send, RegSink            *Node // left: send subscriptions
	RegSource, Receive, Join *Node // right: receive one, join it with the right table
	Foreign, RespSink        *Node // right: a right update, joined with its subscribers
	RespSource, Resolver     *Node // left: resolve responses
	Result                   *Node // the result table
}

// FKSubscriptionStore is the subscription store of the foreign-key join
// called name.
func FKSubscriptionStore(name string) string { return name + "-subscriptions" }

// ForeignKeyJoin adds the nodes, topics and stores of the foreign-key join
// called name of tables left and right (looked up in leftStore and
// rightStore), materialized in store unless it is "".
func (g *Graph) ForeignKeyJoin(name string, left, right *Node, leftStore, rightStore, store string) *FKJoin {
	j := &FKJoin{
		RegTopic:  g.InternalTopic(toponame.FKRegistrationTopic(name)),
		RespTopic: g.InternalTopic(toponame.FKResponseTopic(name)),
		SubStore:  FKSubscriptionStore(name),
	}
	reg := Topic{Name: j.RegTopic, Role: TopicInternal}
	resp := Topic{Name: j.RespTopic, Role: TopicInternal}
	g.AddTopic(reg)
	g.AddTopic(resp)

	j.Send = g.Add(name+toponame.FKRegistrationProcessor, "fk_subscription_send", left)
	j.RegSink = g.Sink(name+toponame.FKRegistrationSink, reg, j.Send)

	j.RegSource = g.Add(name+toponame.FKRegistrationSource, OpSource)
	g.Read(j.RegSource, j.RegTopic)
	j.Receive = g.Stateful(name+toponame.FKReceive, "fk_subscription_receive", j.RegSource, j.SubStore)
	j.Join = g.Add(name+toponame.FKJoinForeign, "fk_subscription_join", j.Receive)
	j.Join.Peers = append(j.Join.Peers, right.ID)
	g.Use(j.Join, rightStore)
	j.Foreign = g.Stateful(name+toponame.FKForeignJoin, "fk_foreign_join", right, j.SubStore)
	j.RespSink = g.Sink(name+toponame.FKResponseSink, resp, j.Join)
	j.RespSink.Parents = append(j.RespSink.Parents, j.Foreign.ID)

	j.RespSource = g.Add(name+toponame.FKResponseSource, OpSource)
	g.Read(j.RespSource, j.RespTopic)
	j.Resolver = g.Add(name+toponame.FKResponseResolver, "fk_response_join", j.RespSource)
	j.Resolver.Peers = append(j.Resolver.Peers, left.ID)
	g.Use(j.Resolver, leftStore)
	j.Result = g.Stateful(name+"-result", "fk_join_result", j.Resolver, store)
	return j
}
