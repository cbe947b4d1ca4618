package io.streamgen.conformance;

import static java.time.Duration.ofMillis;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.SessionWindowedKStream;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.Suppressed.BufferConfig;
import org.apache.kafka.streams.kstream.TableJoined;
import org.apache.kafka.streams.kstream.TimeWindowedKStream;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The Kafka Streams topology of every scenario, by name. Each mirrors
 * conformance/scenarios/NAME/streamgen.yaml, including store, repartition and join names, and
 * the static helpers at the bottom mirror the scenario's funcs.go one to one.
 *
 * Records are Jackson trees keyed by the spec's field names; keys are strings; primitive values
 * are Long or String.
 */
final class Scenarios {
    static final Serde<String> S = Serdes.String();
    static final Serde<Long> L = Serdes.Long();
    static final Serde<JsonNode> J = new JsonSerde();

    static final Map<String, Consumer<StreamsBuilder>> ALL = new TreeMap<>();

    private Scenarios() {}

    enum Agg { COUNT, REDUCE, AGGREGATE }

    /** How a windowed aggregation emits: every update, EmitStrategy.onWindowClose, or suppress. */
    enum Emit { UPDATE, CLOSE, SUPPRESS }

    record Win(String kind, long size, long advance, long grace) {
        static Win tumbling(long size, long grace) { return new Win("tumbling", size, size, grace); }
        static Win hopping(long size, long advance, long grace) { return new Win("hopping", size, advance, grace); }
        static Win sliding(long diff, long grace) { return new Win("sliding", diff, 0, grace); }
        static Win session(long gap, long grace) { return new Win("session", gap, 0, grace); }

        Serde<Windowed<String>> keySerde() {
            return kind.equals("session") ? WindowedSerdes.sessionWindowedSerdeFrom(String.class)
                    : WindowedSerdes.timeWindowedSerdeFrom(String.class, size);
        }
    }

    static {
        // Windowed aggregations: a covering subset of window kind x operation x emit strategy,
        // with and without grace. Keep in step with the scenario directories.
        windowed("tumbling-count", Win.tumbling(10_000, 0), Agg.COUNT, Emit.UPDATE);
        windowed("tumbling-reduce", Win.tumbling(10_000, 0), Agg.REDUCE, Emit.UPDATE);
        windowed("tumbling-aggregate", Win.tumbling(10_000, 0), Agg.AGGREGATE, Emit.UPDATE);
        windowed("tumbling-count-final", Win.tumbling(10_000, 0), Agg.COUNT, Emit.CLOSE);
        windowed("tumbling-reduce-final-grace", Win.tumbling(10_000, 3_000), Agg.REDUCE, Emit.CLOSE);
        windowed("tumbling-aggregate-suppress", Win.tumbling(10_000, 2_000), Agg.AGGREGATE, Emit.SUPPRESS);
        windowed("tumbling-count-grace", Win.tumbling(10_000, 5_000), Agg.COUNT, Emit.UPDATE);
        windowed("hopping-count", Win.hopping(10_000, 4_000, 0), Agg.COUNT, Emit.UPDATE);
        windowed("hopping-reduce-final", Win.hopping(10_000, 4_000, 0), Agg.REDUCE, Emit.CLOSE);
        windowed("hopping-aggregate-suppress", Win.hopping(10_000, 4_000, 3_000), Agg.AGGREGATE, Emit.SUPPRESS);
        windowed("hopping-aggregate-grace", Win.hopping(10_000, 4_000, 4_000), Agg.AGGREGATE, Emit.UPDATE);
        windowed("sliding-count", Win.sliding(5_000, 0), Agg.COUNT, Emit.UPDATE);
        windowed("sliding-reduce", Win.sliding(5_000, 0), Agg.REDUCE, Emit.UPDATE);
        windowed("sliding-aggregate", Win.sliding(5_000, 0), Agg.AGGREGATE, Emit.UPDATE);
        windowed("sliding-count-final", Win.sliding(5_000, 0), Agg.COUNT, Emit.CLOSE);
        windowed("sliding-reduce-suppress", Win.sliding(5_000, 2_000), Agg.REDUCE, Emit.SUPPRESS);
        windowed("sliding-aggregate-grace", Win.sliding(5_000, 3_000), Agg.AGGREGATE, Emit.UPDATE);
        windowed("session-count", Win.session(5_000, 0), Agg.COUNT, Emit.UPDATE);
        windowed("session-reduce", Win.session(5_000, 0), Agg.REDUCE, Emit.UPDATE);
        windowed("session-aggregate", Win.session(5_000, 0), Agg.AGGREGATE, Emit.UPDATE);
        windowed("session-count-final", Win.session(5_000, 0), Agg.COUNT, Emit.CLOSE);
        windowed("session-reduce-suppress", Win.session(5_000, 2_000), Agg.REDUCE, Emit.SUPPRESS);
        windowed("session-aggregate-final-grace", Win.session(5_000, 3_000), Agg.AGGREGATE, Emit.CLOSE);
        // With a record cache (scenario.json's cache_bytes): the updates one record makes of a
        // window coalesce, as the cache flushes once per input record in TopologyTestDriver.
        windowed("hopping-aggregate-cached", Win.hopping(10_000, 4_000, 2_000), Agg.AGGREGATE, Emit.UPDATE, true);
        windowed("sliding-aggregate-cached", Win.sliding(5_000, 1_000), Agg.AGGREGATE, Emit.UPDATE, true);
        windowed("session-aggregate-cached", Win.session(5_000, 0), Agg.AGGREGATE, Emit.UPDATE, true);
        windowed("tumbling-aggregate-final-cached", Win.tumbling(10_000, 2_000), Agg.AGGREGATE, Emit.CLOSE, true);

        // Stream-stream joins: symmetric, asymmetric (before/after) and graced windows.
        JoinWindows sym = JoinWindows.ofTimeDifferenceWithNoGrace(ofMillis(5_000));
        JoinWindows asym = JoinWindows.ofTimeDifferenceWithNoGrace(ofMillis(0)).before(ofMillis(2_000)).after(ofMillis(6_000));
        JoinWindows asymGrace = JoinWindows.ofTimeDifferenceAndGrace(ofMillis(0), ofMillis(3_000))
                .before(ofMillis(2_000)).after(ofMillis(6_000));
        JoinWindows symGrace = JoinWindows.ofTimeDifferenceAndGrace(ofMillis(5_000), ofMillis(3_000));
        streamStream("ss-inner", "inner", sym);
        streamStream("ss-left", "left", sym);
        streamStream("ss-outer", "outer", sym);
        streamStream("ss-inner-asym", "inner", asym);
        streamStream("ss-left-asym-grace", "left", asymGrace);
        streamStream("ss-outer-asym-grace", "outer", asymGrace);
        streamStream("ss-outer-grace", "outer", symGrace);

        streamTable("st-inner", false);
        streamTable("st-left", true);
        versionedScenarios();
        tableTable("tt-inner", "inner", null);
        tableTable("tt-left", "left", null);
        tableTable("tt-outer", "outer", null);
        tableTable("tt-outer-materialized", "outer", "tt-store");
        foreignKey("fk-inner", false, null);
        foreignKey("fk-left", true, null);
        foreignKey("fk-left-materialized", true, "fk-store");

        ALL.put("table-groupby-aggregate", b -> b
                .table("accounts", Consumed.with(S, J), mat("accounts-store", J))
                .groupBy((k, v) -> KeyValue.pair(v.get("region").asText(), v.get("amount").asLong()),
                        Grouped.with("regions", S, L))
                .aggregate(() -> 0L, (k, v, agg) -> agg + v, (k, v, agg) -> agg - v, mat("region-totals", L))
                .toStream().to("out", Produced.with(S, L)));
        ALL.put("table-groupby-count", b -> b
                .table("accounts", Consumed.with(S, J), mat("accounts-store", J))
                .groupBy((k, v) -> KeyValue.pair(v.get("region").asText(), v), Grouped.with("regions", S, J))
                .count(mat("region-counts", L))
                .toStream().to("out", Produced.with(S, L)));
        ALL.put("branch-merge-count", Scenarios::branchMerge);
        ALL.put("cogroup-tumbling", b -> {
            KGroupedStream<String, Long> clicks = b.stream("clicks", Consumed.with(S, L)).groupByKey(Grouped.with(S, L));
            KGroupedStream<String, Long> views = b.stream("views", Consumed.with(S, L)).groupByKey(Grouped.with(S, L));
            clicks.<String>cogroup(Scenarios::addClick)
                    .cogroup(views, Scenarios::addView)
                    .windowedBy(TimeWindows.ofSizeAndGrace(ofMillis(10_000), ofMillis(2_000)))
                    .aggregate(Scenarios::empty, mat("activity-store", S))
                    .toStream().to("out", Produced.with(Win.tumbling(10_000, 0).keySerde(), S));
        });
        ALL.put("cogroup-session", b -> {
            KGroupedStream<String, Long> clicks = b.stream("clicks", Consumed.with(S, L)).groupByKey(Grouped.with(S, L));
            KGroupedStream<String, Long> views = b.stream("views", Consumed.with(S, L)).groupByKey(Grouped.with(S, L));
            clicks.<String>cogroup(Scenarios::addClick)
                    .cogroup(views, Scenarios::addView)
                    .windowedBy(SessionWindows.ofInactivityGapAndGrace(ofMillis(5_000), ofMillis(1_000)))
                    .aggregate(Scenarios::empty, Scenarios::mergeLists, mat("activity-store", S))
                    .toStream().to("out", Produced.with(Win.session(5_000, 0).keySerde(), S));
        });
        ALL.put("flatmap-count", b -> b
                .stream("events", Consumed.with(S, L))
                .flatMap(Scenarios::fanout)
                .groupByKey(Grouped.with("fanout", S, L))
                .count(mat("fanout-counts", L))
                .toStream().to("out", Produced.with(S, L)));
        windowed("session-count-suppress", Win.session(5_000, 0), Agg.COUNT, Emit.SUPPRESS);
        cogroupWindowed("cogroup-hopping", TimeWindows.ofSizeAndGrace(ofMillis(10_000), ofMillis(2_000)).advanceBy(ofMillis(4_000)),
                Win.tumbling(10_000, 0));
        cogroupWindowed("cogroup-sliding", SlidingWindows.ofTimeDifferenceAndGrace(ofMillis(5_000), ofMillis(1_000)),
                Win.sliding(5_000, 0));
        streams();
        tables();
        lookups();
        nulls();
        WindowedKeyScenarios.register(ALL);
        ALL.put("suppress-time-limit", b -> b
                .stream("events", Consumed.with(S, L))
                .groupByKey(Grouped.with(S, L))
                .count(mat("latest-counts", L))
                .suppress(Suppressed.untilTimeLimit(ofMillis(5_000), BufferConfig.unbounded()).withName("limit"))
                .toStream().to("out", Produced.with(S, L)));
    }

    private static void windowed(String name, Win win, Agg agg, Emit emit) {
        windowed(name, win, agg, emit, false);
    }

    /**
     * A windowed aggregation of "events"; with spread, each record first becomes one to three
     * (flatMapValues, no repartition), so one input record updates its windows several times.
     */
    private static void windowed(String name, Win win, Agg agg, Emit emit, boolean spread) {
        ALL.put(name, b -> {
            KStream<String, Long> events = b.stream("events", Consumed.with(S, L));
            if (spread) {
                events = events.flatMapValues(Scenarios::spread);
            }
            KGroupedStream<String, Long> g = events.groupByKey(Grouped.with(S, L));
            if (win.kind.equals("session")) {
                SessionWindowedKStream<String, Long> w =
                        g.windowedBy(SessionWindows.ofInactivityGapAndGrace(ofMillis(win.size), ofMillis(win.grace)));
                if (emit == Emit.CLOSE) {
                    w = w.emitStrategy(EmitStrategy.onWindowClose());
                }
                switch (agg) {
                    case COUNT -> finish(w.count(mat("agg-store", L)), L, win, emit);
                    case REDUCE -> finish(w.reduce(Scenarios::sum, mat("agg-store", L)), L, win, emit);
                    case AGGREGATE -> finish(w.aggregate(Scenarios::empty, Scenarios::append, Scenarios::mergeLists,
                            mat("agg-store", S)), S, win, emit);
                }
                return;
            }
            TimeWindowedKStream<String, Long> w = switch (win.kind) {
                case "sliding" -> g.windowedBy(
                        SlidingWindows.ofTimeDifferenceAndGrace(ofMillis(win.size), ofMillis(win.grace)));
                default -> g.windowedBy(
                        TimeWindows.ofSizeAndGrace(ofMillis(win.size), ofMillis(win.grace)).advanceBy(ofMillis(win.advance)));
            };
            if (emit == Emit.CLOSE) {
                w = w.emitStrategy(EmitStrategy.onWindowClose());
            }
            switch (agg) {
                case COUNT -> finish(w.count(mat("agg-store", L)), L, win, emit);
                case REDUCE -> finish(w.reduce(Scenarios::sum, mat("agg-store", L)), L, win, emit);
                case AGGREGATE -> finish(w.aggregate(Scenarios::empty, Scenarios::append, mat("agg-store", S)), S, win, emit);
            }
        });
    }

    private static <V> void finish(KTable<Windowed<String>, V> t, Serde<V> values, Win win, Emit emit) {
        if (emit == Emit.SUPPRESS) {
            t = t.suppress(Suppressed.untilWindowCloses(BufferConfig.unbounded()).withName("final"));
        }
        t.toStream().to("out", Produced.with(win.keySerde(), values));
    }

    private static void streamStream(String name, String kind, JoinWindows windows) {
        ALL.put(name, b -> {
            KStream<String, JsonNode> left = b.stream("left", Consumed.with(S, J));
            KStream<String, JsonNode> right = b.stream("right", Consumed.with(S, J));
            StreamJoined<String, JsonNode, JsonNode> joined =
                    StreamJoined.with(S, J, J).withStoreName("ss").withName("ss");
            KStream<String, String> out = switch (kind) {
                case "inner" -> left.join(right, Scenarios::joinEvents, windows, joined);
                case "left" -> left.leftJoin(right, Scenarios::joinEvents, windows, joined);
                default -> left.outerJoin(right, Scenarios::joinEvents, windows, joined);
            };
            out.to("out", Produced.with(S, S));
        });
    }

    private static void streamTable(String name, boolean leftJoin) {
        ALL.put(name, b -> {
            KStream<String, JsonNode> events = b.stream("events", Consumed.with(S, J));
            KTable<String, JsonNode> infos = b.table("infos", Consumed.with(S, J), mat("infos-store", J));
            Joined<String, JsonNode, JsonNode> joined = Joined.with(S, J, J, "st");
            KStream<String, String> out = leftJoin
                    ? events.leftJoin(infos, Scenarios::eventWithInfo, joined)
                    : events.join(infos, Scenarios::eventWithInfo, joined);
            out.to("out", Produced.with(S, S));
        });
    }

    // Versioned tables (KIP-889, KIP-914) and the stream-table join grace (KIP-923).
    private static void versionedScenarios() {
        for (String name : new String[] {"st-versioned", "st-versioned-grace"}) {
            ALL.put(name, b -> {
                KStream<String, JsonNode> events = b.stream("events", Consumed.with(S, J));
                KTable<String, JsonNode> infos = b.table("infos", Consumed.with(S, J), versioned("infos-store"));
                Joined<String, JsonNode, JsonNode> joined = Joined.with(S, J, J, "st");
                if (name.endsWith("-grace")) {
                    joined = joined.withGracePeriod(ofMillis(3000));
                }
                events.leftJoin(infos, Scenarios::eventWithInfo, joined).to("out", Produced.with(S, S));
            });
        }
        ALL.put("tt-versioned-materialized", b -> {
            KTable<String, JsonNode> left = b.table("left", Consumed.with(S, J), versioned("left-store"));
            KTable<String, JsonNode> right = b.table("right", Consumed.with(S, J), versioned("right-store"));
            left.outerJoin(right, Scenarios::tableJoin, Named.as("tt"), mat("tt-store", S))
                    .toStream().to("out", Produced.with(S, S));
        });
        // mapValues and filter inherit versioned semantics from the table
        // (InternalStreamsBuilder#isVersionedOrVersionedUpstream).
        ALL.put("versioned-mapvalues-filter", b -> {
            KTable<String, String> labels = b.table("infos", Consumed.with(S, J), versioned("infos-store"))
                    .mapValues(Scenarios::describe)
                    .filter((k, v) -> !v.startsWith("a/"));
            labels.toStream().to("out", Produced.with(S, S));
            b.stream("events", Consumed.with(S, J))
                    .leftJoin(labels, (k, e, l) -> eventV(e) + "|" + (l == null ? "null" : l), Joined.with(S, J, S, "st"))
                    .to("joined", Produced.with(S, S));
        });
        ALL.put("versioned-groupby-aggregate", b -> b
                .table("accounts", Consumed.with(S, J), versioned("accounts-store"))
                .groupBy((k, v) -> KeyValue.pair(v.get("region").asText(), v.get("amount").asLong()),
                        Grouped.with("regions", S, L))
                .aggregate(() -> 0L, (k, v, agg) -> agg + v, (k, v, agg) -> agg - v, mat("region-totals", L))
                .toStream().to("out", Produced.with(S, L)));
        ALL.put("fk-versioned", b -> {
            KTable<String, JsonNode> orders = b.table("orders", Consumed.with(S, J), versioned("orders-store"));
            KTable<String, JsonNode> products = b.table("products", Consumed.with(S, J), versioned("products-store"));
            orders.leftJoin(products, Scenarios::orderProduct, Scenarios::orderWithProduct, TableJoined.as("fk"))
                    .toStream().to("out", Produced.with(S, S));
        });
    }

    // versioned is Materialized on a versioned store with a 5 s history retention.
    private static Materialized<String, JsonNode, KeyValueStore<Bytes, byte[]>> versioned(String store) {
        return Materialized.<String, JsonNode>as(Stores.persistentVersionedKeyValueStore(store, ofMillis(5000)))
                .withKeySerde(S).withValueSerde(J);
    }

    // store, when set, materializes the join's result (Materialized.as).
    private static void tableTable(String name, String kind, String store) {
        ALL.put(name, b -> {
            KTable<String, JsonNode> left = b.table("left", Consumed.with(S, J), mat("left-store", J));
            KTable<String, JsonNode> right = b.table("right", Consumed.with(S, J), mat("right-store", J));
            KTable<String, String> out;
            if (store == null) {
                out = switch (kind) {
                    case "inner" -> left.join(right, Scenarios::tableJoin, Named.as("tt"));
                    case "left" -> left.leftJoin(right, Scenarios::tableJoin, Named.as("tt"));
                    default -> left.outerJoin(right, Scenarios::tableJoin, Named.as("tt"));
                };
            } else {
                out = switch (kind) {
                    case "inner" -> left.join(right, Scenarios::tableJoin, Named.as("tt"), mat(store, S));
                    case "left" -> left.leftJoin(right, Scenarios::tableJoin, Named.as("tt"), mat(store, S));
                    default -> left.outerJoin(right, Scenarios::tableJoin, Named.as("tt"), mat(store, S));
                };
            }
            out.toStream().to("out", Produced.with(S, S));
        });
    }

    // store, when set, materializes the join's result (Materialized.as).
    private static void foreignKey(String name, boolean leftJoin, String store) {
        ALL.put(name, b -> {
            KTable<String, JsonNode> orders = b.table("orders", Consumed.with(S, J), mat("orders-store", J));
            KTable<String, JsonNode> products = b.table("products", Consumed.with(S, J), mat("products-store", J));
            Function<JsonNode, String> product = Scenarios::orderProduct;
            TableJoined<String, String> named = TableJoined.as("fk");
            KTable<String, String> out;
            if (store == null) {
                out = leftJoin
                        ? orders.leftJoin(products, product, Scenarios::orderWithProduct, named)
                        : orders.join(products, product, Scenarios::orderWithProduct, named);
            } else {
                out = leftJoin
                        ? orders.leftJoin(products, product, Scenarios::orderWithProduct, named, mat(store, S))
                        : orders.join(products, product, Scenarios::orderWithProduct, named, mat(store, S));
            }
            out.toStream().to("out", Produced.with(S, S));
        });
    }

    private static void branchMerge(StreamsBuilder b) {
        Map<String, KStream<String, Long>> parts = b.stream("events", Consumed.with(S, L))
                .split(Named.as("parts-"))
                .branch(Scenarios::isSmall, Branched.as("small"))
                .defaultBranch(Branched.as("large"));
        parts.get("parts-small").mapValues(Scenarios::times10).merge(parts.get("parts-large"))
                .selectKey(Scenarios::parityKey)
                .groupByKey(Grouped.with("by-parity", S, L))
                .count(mat("parity-counts", L))
                .toStream().to("out", Produced.with(S, L));
    }

    private static void cogroupWindowed(String name, TimeWindows windows, Win out) {
        ALL.put(name, b -> cogrouped(b).windowedBy(windows).aggregate(Scenarios::empty, mat("activity-store", S))
                .toStream().to("out", Produced.with(out.keySerde(), S)));
    }

    private static void cogroupWindowed(String name, SlidingWindows windows, Win out) {
        ALL.put(name, b -> cogrouped(b).windowedBy(windows).aggregate(Scenarios::empty, mat("activity-store", S))
                .toStream().to("out", Produced.with(out.keySerde(), S)));
    }

    private static org.apache.kafka.streams.kstream.CogroupedKStream<String, String> cogrouped(StreamsBuilder b) {
        KGroupedStream<String, Long> clicks = b.stream("clicks", Consumed.with(S, L)).groupByKey(Grouped.with(S, L));
        KGroupedStream<String, Long> views = b.stream("views", Consumed.with(S, L)).groupByKey(Grouped.with(S, L));
        return clicks.<String>cogroup(Scenarios::addClick).cogroup(views, Scenarios::addView);
    }

    /** Stateless chains and plain (non-windowed) aggregations of streams: funcs "stream". */
    private static void streams() {
        ALL.put("rekey-map-count", b -> b
                .stream("events", Consumed.with(S, L))
                .filter(Scenarios::nonZero)
                .map(Scenarios::bucketOf)
                .groupByKey(Grouped.with("buckets", S, L))
                .count(mat("bucket-counts", L))
                .toStream().to("out", Produced.with(S, L)));
        ALL.put("flatmapvalues-reduce", b -> b
                .stream("events", Consumed.with(S, L))
                .flatMapValues(Scenarios::copies)
                .groupByKey(Grouped.with(S, L))
                .reduce(Scenarios::sum, mat("sums-store", L))
                .toStream().to("out", Produced.with(S, L)));
        ALL.put("split-four", b -> {
            Map<String, KStream<String, Long>> parts = b.stream("events", Consumed.with(S, L))
                    .split(Named.as("parts-"))
                    .branch(Scenarios::isLow, Branched.as("low"))
                    .branch(Scenarios::isMid, Branched.as("mid"))
                    .branch(Scenarios::isHigh, Branched.as("high"))
                    .defaultBranch(Branched.as("rest"));
            parts.get("parts-low").to("out-low", Produced.with(S, L));
            parts.get("parts-mid").mapValues(Scenarios::times10).to("out-mid", Produced.with(S, L));
            parts.get("parts-high").to("out-high", Produced.with(S, L));
            parts.get("parts-rest").to("out-rest", Produced.with(S, L));
        });
        ALL.put("merge-three", b -> {
            KStream<String, String> tb = b.stream("b", Consumed.with(S, L)).mapValues(v -> "b" + v);
            KStream<String, String> tc = b.stream("c", Consumed.with(S, L)).mapValues(v -> "c" + v);
            b.stream("a", Consumed.with(S, L)).mapValues(v -> "a" + v).merge(tb).merge(tc)
                    .to("out", Produced.with(S, S));
        });
        ALL.put("repartition-partitions", b -> b
                .stream("events", Consumed.with(S, L))
                .selectKey(Scenarios::modKey)
                .repartition(Repartitioned.<String, Long>as("by-mod").withKeySerde(S).withValueSerde(L)
                        .withNumberOfPartitions(3))
                .groupByKey(Grouped.with(S, L))
                .count(mat("mod-counts", L))
                .toStream().to("out", Produced.with(S, L)));
        ALL.put("stream-reduce", b -> b
                .stream("events", Consumed.with(S, L))
                .groupByKey(Grouped.with(S, L))
                .reduce(Math::min, mat("mins-store", L))
                .toStream().to("out", Produced.with(S, L)));
        ALL.put("stream-aggregate-rekey", b -> b
                .stream("events", Consumed.with(S, L))
                .groupBy((k, v) -> "g" + keyDigit(k) % 2, Grouped.with("groups", S, L))
                .aggregate(Scenarios::empty, Scenarios::append, mat("group-lists", S))
                .toStream().to("out", Produced.with(S, S)));
        ALL.put("process-values-store", b -> {
            b.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("seen"), S, L));
            b.stream("events", Consumed.with(S, L)).processValues(Seen::new, "seen").to("out", Produced.with(S, S));
        });
    }

    /** Numbers the records of each key in the store "seen"; a tombstone resets the count (twin of funcs.go's seen). */
    static final class Seen implements FixedKeyProcessor<String, Long, String> {
        private FixedKeyProcessorContext<String, String> ctx;
        private KeyValueStore<String, Long> store;

        @Override
        public void init(FixedKeyProcessorContext<String, String> context) {
            ctx = context;
            store = context.getStateStore("seen");
        }

        @Override
        public void process(FixedKeyRecord<String, Long> r) {
            if (r.value() == null) {
                store.delete(r.key());
                ctx.forward(r.withValue("reset"));
                return;
            }
            Long prev = store.get(r.key());
            long n = prev == null ? 1 : prev + 1;
            store.put(r.key(), n);
            ctx.forward(r.withValue(n + ":" + r.value()));
        }
    }

    /** Table operators: funcs "table" and "table-groupby". */
    private static void tables() {
        ALL.put("table-filter-mapvalues", b -> b
                .table("infos", Consumed.with(S, J), mat("infos-store", J))
                .filter((k, v) -> v.get("n").asLong() < 5)
                .mapValues(Scenarios::describe)
                .toStream().to("out", Produced.with(S, S)));
        ALL.put("table-filternot-tostream", b -> b
                .table("infos", Consumed.with(S, J), mat("infos-store", J))
                .filterNot((k, v) -> v.get("label").asText().equals("a"))
                .toStream()
                .mapValues((k, v) -> v == null ? "null" : describe(k, v))
                .to("out", Produced.with(S, S)));
        ALL.put("stream-to-table", b -> b
                .stream("events", Consumed.with(S, J))
                .toTable(mat("latest-store", J))
                .mapValues(Scenarios::describe)
                .toStream().to("out", Produced.with(S, S)));
        ALL.put("table-source-tostream", b -> b
                .table("infos", Consumed.with(S, S), mat("infos-store", S))
                .toStream().to("out", Produced.with(S, S)));
        ALL.put("table-groupby-reduce", b -> b
                .table("accounts", Consumed.with(S, J), mat("accounts-store", J))
                .groupBy((k, v) -> KeyValue.pair(v.get("region").asText(), v.get("amount").asLong()),
                        Grouped.with("regions", S, L))
                .reduce(Scenarios::sum, (agg, v) -> agg - v, mat("region-sums", L))
                .toStream().to("out", Produced.with(S, L)));
        ALL.put("tt-inner-filtered", b -> {
            KTable<String, JsonNode> left = b.table("left", Consumed.with(S, J), mat("left-store", J));
            KTable<String, JsonNode> right = b.table("right", Consumed.with(S, J), mat("right-store", J));
            left.filter((k, v) -> v.get("v").asLong() < 6).join(right, Scenarios::tableJoin, Named.as("tt"))
                    .toStream().to("out", Produced.with(S, S));
        });
        ALL.put("tt-left-filtered", b -> {
            KTable<String, JsonNode> left = b.table("left", Consumed.with(S, J), mat("left-store", J));
            KTable<String, JsonNode> right = b.table("right", Consumed.with(S, J), mat("right-store", J));
            left.leftJoin(right.filter((k, v) -> !v.get("label").asText().equals("d")), Scenarios::tableJoin, Named.as("tt"))
                    .toStream().to("out", Produced.with(S, S));
        });
    }

    /** Lookup joins of a stream by a field of its value: funcs "lookup-join". */
    private static void lookups() {
        for (boolean leftJoin : new boolean[] {false, true}) {
            ALL.put(leftJoin ? "sg-left" : "sg-inner", b -> {
                KStream<String, JsonNode> events = b.stream("events", Consumed.with(S, J));
                GlobalKTable<String, JsonNode> infos = b.globalTable("infos", Consumed.with(S, J), mat("infos-store", J));
                KStream<String, String> out = leftJoin
                        ? events.leftJoin(infos, Scenarios::eventRef, Scenarios::eventWithRef, Named.as("joined.sg"))
                        : events.join(infos, Scenarios::eventRef, Scenarios::eventWithRef, Named.as("joined.sg"));
                out.to("out", Produced.with(S, S));
            });
        }
        ALL.put("st-inner-rekey", b -> {
            KStream<String, JsonNode> events = b.stream("events", Consumed.with(S, J));
            KTable<String, JsonNode> infos = b.table("infos", Consumed.with(S, J), mat("infos-store", J));
            events.selectKey(Scenarios::eventRef)
                    .join(infos, Scenarios::eventWithRef, Joined.with(S, J, J, "st"))
                    .to("out", Produced.with(S, S));
        });
    }

    /** Tombstones through user functions: funcs "null-stream". */
    private static void nulls() {
        ALL.put("null-through-map", b -> {
            b.stream("plays", Consumed.with(S, L))
                    .groupByKey(Grouped.with(S, L))
                    .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(ofMillis(5_000)))
                    .count(mat("play-counts", L))
                    .toStream()
                    .map(Scenarios::readableSession)
                    .to("out-sessions", Produced.with(S, L));
            KStream<String, Long> tagged = b.table("infos", Consumed.with(S, L), mat("infos-store", L))
                    .toStream()
                    .map(Scenarios::tagKey);
            tagged.to("out-tagged", Produced.with(S, L));
            tagged.filter((k, v) -> v != null).mapValues(v -> v * 2).to("out-present", Produced.with(S, L));
        });
        ALL.put("left-join-zero", b -> {
            KTable<String, Long> prices = b.table("prices", Consumed.with(S, L), mat("prices-store", L));
            b.stream("plays", Consumed.with(S, L))
                    .leftJoin(prices, Scenarios::priced, Joined.with(S, L, L, "st"))
                    .to("out-left", Produced.with(S, S));
            KTable<String, Long> lefts = b.table("lefts", Consumed.with(S, L), mat("lefts-store", L));
            KTable<String, Long> rights = b.table("rights", Consumed.with(S, L), mat("rights-store", L));
            lefts.outerJoin(rights, Scenarios::paired, Named.as("tt")).toStream().to("out-tables", Produced.with(S, S));
            b.stream("clicks", Consumed.with(S, L))
                    .outerJoin(b.stream("views", Consumed.with(S, L)), Scenarios::paired,
                            JoinWindows.ofTimeDifferenceWithNoGrace(ofMillis(5_000)),
                            StreamJoined.with(S, L, L).withStoreName("ss").withName("ss"))
                    .to("out-streams", Produced.with(S, S));
        });
        ALL.put("null-stream-topic", b -> {
            KStream<String, Long> scores = b.stream("scores", Consumed.with(S, L));
            scores.map(Scenarios::tagKey).filter(Scenarios::nullOrTwenties).to("out-mapped", Produced.with(S, L));
            scores.process(Marker::new).to("out-processed", Produced.with(S, L));
            scores.to((k, v, ctx) -> routeScore(k, v), Produced.with(S, L));
            scores.groupBy(Scenarios::parity, Grouped.with("by-parity", S, L))
                    .windowedBy(TimeWindows.ofSizeWithNoGrace(ofMillis(10_000)))
                    .aggregate(Scenarios::empty, Scenarios::appendScore, mat("parity-windows", S))
                    .toStream()
                    .to("out-windows", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10_000), S));
        });
        ALL.put("null-windowed", b -> {
            KGroupedStream<String, Long> byKey = b.stream("scores", Consumed.with(S, L)).groupByKey(Grouped.with(S, L));
            byKey.windowedBy(TimeWindows.ofSizeWithNoGrace(ofMillis(10_000)))
                    .reduce(Scenarios::sumOrDelete, mat("sums", L))
                    .toStream()
                    .mapValues((k, v) -> v)
                    .to("out-sums", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10_000), L));
            byKey.windowedBy(SessionWindows.ofInactivityGapWithNoGrace(ofMillis(5_000)))
                    .aggregate(Scenarios::empty, Scenarios::appendScore, Scenarios::mergeLists, mat("sessions", S))
                    .toStream()
                    .to("out-sessions", Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(String.class), S));
        });
    }

    /** Forwards every record under "key#kind" with its value unchanged, null as null (twin of funcs' marker). */
    static final class Marker implements Processor<String, Long, String, Long> {
        private ProcessorContext<String, Long> ctx;

        @Override
        public void init(ProcessorContext<String, Long> context) {
            ctx = context;
        }

        @Override
        public void process(Record<String, Long> r) {
            String kind = r.value() == null ? "null" : r.value() == 0 ? "zero" : "value";
            ctx.forward(r.withKey(r.key() + "#" + kind));
        }
    }

    private static <V, T extends StateStore> Materialized<String, V, T> mat(String store, Serde<V> values) {
        return Materialized.<String, V, T>as(store).withKeySerde(S).withValueSerde(values);
    }

    // User functions: each is the twin of the Go function of the same name in funcs.go.

    static Long sum(Long agg, Long value) { return agg + value; }

    static String empty() { return ""; }

    static String append(String key, Long value, String agg) {
        return agg.isEmpty() ? value.toString() : agg + "," + value;
    }

    static String addClick(String key, Long value, String agg) { return tagged(agg, "c", value); }

    static String addView(String key, Long value, String agg) { return tagged(agg, "v", value); }

    static String tagged(String agg, String tag, Long value) {
        return agg.isEmpty() ? tag + value : agg + "," + tag + value;
    }

    static List<Long> spread(Long value) {
        List<Long> out = new ArrayList<>();
        for (long i = 0; i <= value % 3; i++) {
            out.add(value * 10 + i);
        }
        return out;
    }

    static String mergeLists(String key, String a, String b) {
        return a.isEmpty() ? b : b.isEmpty() ? a : a + "+" + b;
    }

    static String eventV(JsonNode e) { return e == null ? "null" : Long.toString(e.get("v").asLong()); }

    static String label(JsonNode i) { return i == null ? "null" : i.get("label").asText(); }

    static String joinEvents(String key, JsonNode left, JsonNode right) { return eventV(left) + "|" + eventV(right); }

    static String eventWithInfo(String key, JsonNode event, JsonNode info) { return eventV(event) + "|" + label(info); }

    static String tableJoin(JsonNode left, JsonNode right) { return eventV(left) + "|" + label(right); }

    static String orderProduct(JsonNode order) { return order.get("product").asText(); }

    static String orderWithProduct(JsonNode order, JsonNode product) {
        return order.get("qty").asLong() + "x" + label(product);
    }

    static KeyValue<String, Long> readableSession(Windowed<String> key, Long value) {
        return KeyValue.pair(key.key() + "@" + key.window().start() + "->" + key.window().end(), value);
    }

    static KeyValue<String, Long> tagKey(String key, Long value) {
        return KeyValue.pair(key + "!", value == null ? null : value * 10);
    }

    static boolean nullOrTwenties(String key, Long value) { return value == null || value % 20 == 0; }

    static String routeScore(String key, Long value) { return value == null ? "out-nulls" : "out-values"; }

    static String parity(String key, Long value) {
        return value == null ? "none" : value % 2 == 0 ? "even" : "odd";
    }

    static String appendScore(String key, Long value, String agg) {
        String s = value == null ? "null" : value.toString();
        return agg.isEmpty() ? s : agg + "," + s;
    }

    static Long sumOrDelete(Long agg, Long value) { return value == null ? null : agg + value; }

    static String priced(Long plays, Long price) { return plays + "*" + optional(price); }

    static String paired(Long left, Long right) { return optional(left) + "|" + optional(right); }

    private static String optional(Long v) { return v == null ? "?" : v.toString(); }

    static boolean isSmall(String key, Long value) { return value < 5; }

    static Long times10(Long value) { return value * 10; }

    static String parityKey(String key, Long value) { return key + "-" + (value % 2); }

    static List<KeyValue<String, Long>> fanout(String key, Long value) {
        List<KeyValue<String, Long>> out = new ArrayList<>();
        for (long i = 0; i < value % 3; i++) {
            out.add(KeyValue.pair(key + "#" + i, value));
        }
        return out;
    }

    static boolean nonZero(String key, Long value) { return value != 0; }

    static long keyDigit(String key) { return key.charAt(key.length() - 1) - '0'; }

    static KeyValue<String, Long> bucketOf(String key, Long value) {
        return KeyValue.pair("b" + (value % 3), value * 10 + keyDigit(key));
    }

    static boolean isLow(String key, Long value) { return value < 3; }

    static boolean isMid(String key, Long value) { return value < 6; }

    static boolean isHigh(String key, Long value) { return value < 8; }

    static String modKey(String key, Long value) { return key + "-" + (value % 3); }

    static List<Long> copies(Long value) {
        List<Long> out = new ArrayList<>();
        for (long i = 0; i < value % 3; i++) {
            out.add(value * 10 + i);
        }
        return out;
    }

    static String describe(String key, JsonNode v) { return v.get("label").asText() + "/" + v.get("n").asLong(); }

    static String eventRef(String key, JsonNode e) { return e == null ? key : e.get("ref").asText(); }

    static String eventWithRef(String key, JsonNode e, JsonNode info) {
        String v = e == null ? "null" : e.get("v").asLong() + "@" + e.get("ref").asText();
        return key + ":" + v + "|" + label(info);
    }
}
