// Package toponame is the one place that spells the names of the internal
// topics and stores a topology creates, as Kafka Streams spells them: the
// runtime creates and reads them, the generator describes them and the
// engine creates the topics, and all of them must agree byte for byte (a
// Java application's state can only be taken over if they do). It imports
// only the standard library, so spec, gen, the runtime and internal/topodesc
// can all use it.
//
// Names come in two forms. The raw name is what a topology calls a topic
// (what Kafka Streams' Topology#describe prints, e.g. "counts-repartition");
// the full name prefixes it with the application id, which is the topic on
// the broker ("orders-app-counts-repartition").
package toponame

import "strings"

// Suffixes of internal topic names.
const (
	RepartitionSuffix  = "-repartition"
	ChangelogSuffix    = "-changelog"
	RegistrationSuffix = "-subscription-registration-topic"
	ResponseSuffix     = "-subscription-response-topic"
)

// Full is the broker-side name of the internal topic raw: "<app>-<raw>".
func Full(app, raw string) string { return app + "-" + raw }

// Raw strips the application id from the full name of an internal topic;
// a name without the prefix is returned unchanged.
func Raw(app, full string) string { return strings.TrimPrefix(full, app+"-") }

// Repartition is the raw name of the repartition topic of the node or
// operation called name: "<name>-repartition".
func Repartition(name string) string { return name + RepartitionSuffix }

// Changelog is the full name of the changelog topic of store:
// "<app>-<store>-changelog".
func Changelog(app, store string) string { return Full(app, store+ChangelogSuffix) }

// Foreign-key join nodes and topics. A foreign-key join called name runs as
// Kafka Streams' does: the left side registers subscriptions with the right
// side through the registration topic, the right side answers through the
// response topic, and each arrow is a processor, a sink and a source.
const (
	FKRegistrationProcessor = "-subscription-registration-processor"
	FKRegistrationSink      = "-subscription-registration-sink"
	FKRegistrationSource    = "-subscription-registration-source"
	FKReceive               = "-subscription-receive"
	FKJoinForeign           = "-subscription-join-foreign"
	FKForeignJoin           = "-foreign-join-subscription"
	FKResponseSink          = "-subscription-response-sink"
	FKResponseSource        = "-subscription-response-source"
	FKResponseResolver      = "-subscription-response-resolver"
)

// FKRegistrationTopic is the raw name of a foreign-key join's subscription
// registration topic (left to right, keyed by the foreign key).
func FKRegistrationTopic(join string) string { return join + RegistrationSuffix }

// FKResponseTopic is the raw name of a foreign-key join's subscription
// response topic (right to left, keyed by the left key).
func FKResponseTopic(join string) string { return join + ResponseSuffix }

// RepartitionFilter, RepartitionSink and RepartitionSource are the nodes
// that write and read back the repartition topic of a stream's repartition
// called name, as Kafka Streams' KStreamImpl names them after the topic's
// raw name: the filter (which passes every record), the sink and the source.
func RepartitionFilter(name string) string { return Repartition(name) + "-filter" }
func RepartitionSink(name string) string   { return Repartition(name) + "-sink" }
func RepartitionSource(name string) string { return Repartition(name) + "-source" }

// TableRepartitionSink and TableRepartitionSource are the nodes of a
// table's group_by repartition called name (Kafka Streams' KGroupedTable:
// "<name>-sink" and "<name>-source", without a filter).
func TableRepartitionSink(name string) string   { return name + "-sink" }
func TableRepartitionSource(name string) string { return name + "-source" }

// SuppressStore is the buffer store of the suppression called name.
func SuppressStore(name string) string { return name + "-store" }
