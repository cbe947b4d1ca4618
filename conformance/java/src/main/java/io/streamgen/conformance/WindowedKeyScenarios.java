package io.streamgen.conformance;

import static io.streamgen.conformance.Scenarios.J;
import static io.streamgen.conformance.Scenarios.L;
import static io.streamgen.conformance.Scenarios.S;
import static java.time.Duration.ofHours;
import static java.time.Duration.ofMillis;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Comparator;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.function.Consumer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.kstream.internals.TimeWindow;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * Scenarios whose keys a step makes windowed (Windowed&lt;K&gt; built in user code, as in
 * Confluent's TopArticlesExample), kept apart from Scenarios.java. Each mirrors
 * conformance/scenarios/NAME/streamgen.yaml and funcs.go.
 */
final class WindowedKeyScenarios {
    private WindowedKeyScenarios() {}

    static void register(Map<String, Consumer<StreamsBuilder>> all) {
        all.put("top-articles", WindowedKeyScenarios::topArticles);
        all.put("groupby-windowed-key", WindowedKeyScenarios::groupByWindowedKey);
        all.put("selectkey-session-windowed", WindowedKeyScenarios::selectKeySessionWindowed);
    }

    /**
     * TopArticlesLambdaExample as published, with JSON records for its Avro ones and explicit
     * names. TimeWindows.of(1h), removed in Kafka 4, gave a grace of 24h minus the size.
     */
    private static void topArticles(StreamsBuilder b) {
        Serde<Windowed<String>> windowedStringSerde = WindowedSerdes.timeWindowedSerdeFrom(String.class, ofHours(1).toMillis());
        KTable<Windowed<JsonNode>, Long> viewCounts = b.stream("PageViews", Consumed.with(S, J))
                .filter((dummy, record) -> isArticle(record))
                .map((dummy, article) -> {
                    ObjectNode clone = JsonSerde.MAPPER.createObjectNode();
                    clone.put("user", "user");
                    clone.set("page", article.get("page"));
                    clone.set("industry", article.get("industry"));
                    return new KeyValue<JsonNode, JsonNode>(clone, clone);
                })
                .groupByKey(Grouped.with("article-views", J, J))
                .windowedBy(TimeWindows.ofSizeAndGrace(ofHours(1), ofHours(23)))
                .count(Materialized.<JsonNode, Long, WindowStore<Bytes, byte[]>>as("view-counts").withKeySerde(J).withValueSerde(L));

        Comparator<JsonNode> comparator = (o1, o2) -> (int) (o2.get("count").asLong() - o1.get("count").asLong());

        KTable<Windowed<String>, PriorityQueue<JsonNode>> allViewCounts = viewCounts
                .groupBy((windowedArticle, count) -> {
                    Windowed<String> windowedIndustry = new Windowed<>(windowedArticle.key().get("industry").asText(), windowedArticle.window());
                    ObjectNode viewStats = JsonSerde.MAPPER.createObjectNode();
                    viewStats.set("page", windowedArticle.key().get("page"));
                    viewStats.put("user", "user");
                    viewStats.set("industry", windowedArticle.key().get("industry"));
                    viewStats.put("count", count);
                    return new KeyValue<Windowed<String>, JsonNode>(windowedIndustry, viewStats);
                }, Grouped.with("industry-views", windowedStringSerde, J))
                .aggregate(
                        () -> new PriorityQueue<>(comparator),
                        (windowedIndustry, record, queue) -> {
                            queue.add(record);
                            return queue;
                        },
                        (windowedIndustry, record, queue) -> {
                            queue.remove(record);
                            return queue;
                        },
                        Materialized.<Windowed<String>, PriorityQueue<JsonNode>, KeyValueStore<Bytes, byte[]>>as("all-view-counts")
                                .withKeySerde(windowedStringSerde).withValueSerde(new QueueSerde(comparator)));

        int topN = 100;
        allViewCounts
                .mapValues(queue -> {
                    StringBuilder sb = new StringBuilder();
                    for (int i = 0; i < topN; i++) {
                        JsonNode record = queue.poll();
                        if (record == null) {
                            break;
                        }
                        sb.append(record.get("page").asText());
                        sb.append("\n");
                    }
                    return sb.toString();
                })
                .toStream().to("TopNewsPerIndustry", Produced.with(windowedStringSerde, S));
    }

    static boolean isArticle(JsonNode record) {
        JsonNode flags = record.get("flags");
        return flags != null && !flags.isNull() && flags.asText().contains("ARTICLE");
    }

    /** A stream grouped under a windowed key its selector builds, counted in a key-value store. */
    private static void groupByWindowedKey(StreamsBuilder b) {
        Serde<Windowed<String>> keys = WindowedSerdes.timeWindowedSerdeFrom(String.class, 10_000);
        b.stream("events", Consumed.with(S, L))
                .groupBy(WindowedKeyScenarios::bucketWindow, Grouped.with("buckets", keys, L))
                .count(Materialized.<Windowed<String>, Long, KeyValueStore<Bytes, byte[]>>as("bucket-counts").withKeySerde(keys).withValueSerde(L))
                .toStream().to("out", Produced.with(keys, L));
    }

    /** Twin of BucketWindow: the window [v%3 * 10s, +10s) of the key. */
    static Windowed<String> bucketWindow(String key, Long value) {
        long start = (value % 3) * 10_000;
        return new Windowed<>(key, new TimeWindow(start, start + 10_000));
    }

    /** A stream re-keyed to a session-windowed key, repartitioned by group_by_key and reduced. */
    private static void selectKeySessionWindowed(StreamsBuilder b) {
        Serde<Windowed<String>> keys = WindowedSerdes.sessionWindowedSerdeFrom(String.class);
        b.stream("events", Consumed.with(S, L))
                .selectKey(WindowedKeyScenarios::sessionOf)
                .groupByKey(Grouped.with("sessions-rekeyed", keys, L))
                .reduce(Scenarios::sum, Materialized.<Windowed<String>, Long, KeyValueStore<Bytes, byte[]>>as("session-sums").withKeySerde(keys).withValueSerde(L))
                .toStream().to("out", Produced.with(keys, L));
    }

    /** Twin of SessionOf: a session of the key from v*1s to v*1s + (key digit)*500ms. */
    static Windowed<String> sessionOf(String key, Long value) {
        long start = value * 1_000;
        return new Windowed<>(key, new SessionWindow(start, start + Scenarios.keyDigit(key) * 500));
    }

    /**
     * Confluent's PriorityQueueSerde with JSON: the queue in iteration order (its heap array);
     * reading offers each element in that order, which rebuilds the same array.
     */
    static final class QueueSerde implements Serde<PriorityQueue<JsonNode>> {
        private final Comparator<JsonNode> comparator;

        QueueSerde(Comparator<JsonNode> comparator) {
            this.comparator = comparator;
        }

        @Override
        public Serializer<PriorityQueue<JsonNode>> serializer() {
            return (topic, queue) -> {
                if (queue == null) {
                    return null;
                }
                ObjectNode o = JsonSerde.MAPPER.createObjectNode();
                ArrayNode heap = o.putArray("heap");
                queue.forEach(heap::add);
                try {
                    return JsonSerde.MAPPER.writeValueAsBytes(o);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            };
        }

        @Override
        public Deserializer<PriorityQueue<JsonNode>> deserializer() {
            return (topic, bytes) -> {
                if (bytes == null) {
                    return null;
                }
                PriorityQueue<JsonNode> queue = new PriorityQueue<>(comparator);
                try {
                    JsonSerde.MAPPER.readTree(bytes).path("heap").forEach(queue::add);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return queue;
            };
        }
    }
}
