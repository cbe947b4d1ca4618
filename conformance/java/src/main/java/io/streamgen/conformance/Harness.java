package io.streamgen.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Runs replay-format sequence files through Kafka Streams' TopologyTestDriver.
 *
 * <pre>
 * Harness list
 * Harness run SCENARIOS_DIR (NAME INPUT OUTPUT)...
 * Harness describe NAME...
 * </pre>
 *
 * One JVM handles many scenarios and every sequence in them, because JVM start-up per
 * sequence would dominate the run. Each sequence gets a fresh driver, so no state leaks
 * between sequences. Stores are Kafka Streams' defaults (RocksDB, on tmpfs when there is one,
 * because the driver commits after every record and each commit writes a checkpoint). The
 * system property conformance.stores=memory switches to the in-memory DSL store suppliers,
 * which is several times faster but not equivalent: with them, emit-on-window-close
 * aggregations emitted nothing in our scenarios where RocksDB emitted the closed windows, and
 * a few stream-stream join sequences differed at the retention boundary.
 * After each input record every output topic is drained (in the order
 * scenario.json lists them), so the output file interleaves results in processing order.
 */
public final class Harness {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private Harness() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("list")) {
            Scenarios.ALL.keySet().forEach(System.out::println);
            return;
        }
        if (args.length == 1 && args[0].equals("dsl-methods")) {
            DslMethods.print();
            return;
        }
        if (args.length >= 2 && args[0].equals("describe")) {
            describe(args);
            return;
        }
        if (args.length < 5 || !args[0].equals("run") || (args.length - 2) % 3 != 0) {
            System.err.println("usage: Harness list | Harness dsl-methods | Harness describe NAME... | Harness run SCENARIOS_DIR (NAME INPUT OUTPUT)...");
            System.exit(2);
        }
        Path dir = Path.of(args[1]);
        Path stateDir = stateParent() == null ? Files.createTempDirectory("conformance-state")
                : Files.createTempDirectory(stateParent(), "conformance-state");
        try {
            for (int i = 2; i < args.length; i += 3) {
                long start = System.nanoTime();
                int n = runScenario(dir, args[i], Path.of(args[i + 1]), Path.of(args[i + 2]), stateDir);
                System.err.printf("harness: %s: %d sequences in %.1fs%n", args[i], n, (System.nanoTime() - start) / 1e9);
            }
        } finally {
            deleteTree(stateDir);
        }
    }

    /**
     * Prints Kafka Streams' own Topology#describe() of each named scenario, each preceded by a
     * line "scenario NAME", for conformance/compare's describe check. The application id is the
     * one the run mode uses, so internal topic names match.
     */
    private static void describe(String[] args) {
        for (int i = 1; i < args.length; i++) {
            var def = Scenarios.ALL.get(args[i]);
            if (def == null) {
                throw new IllegalArgumentException("unknown scenario " + args[i]);
            }
            Properties props = new Properties();
            props.put(StreamsConfig.APPLICATION_ID_CONFIG, "conf-" + args[i]);
            props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
            StreamsBuilder b = new StreamsBuilder(new TopologyConfig(new StreamsConfig(props)));
            def.accept(b);
            System.out.println("scenario " + args[i]);
            System.out.print(b.build(props).describe());
        }
    }

    /** A topic's key and value types as scenario.json spells them (spec type names). */
    private record TopicType(Serde<Object> key, Serde<Object> value, String keyType, String valueType) {}

    private static int runScenario(Path dir, String name, Path in, Path out, Path stateDir)
            throws IOException {
        var def = Scenarios.ALL.get(name);
        if (def == null) {
            throw new IllegalArgumentException("unknown scenario " + name);
        }
        JsonNode sc = JsonSerde.MAPPER.readTree(dir.resolve(name).resolve("scenario.json").toFile());
        Map<String, TopicType> inputs = topics(sc.get("inputs"));
        Map<String, TopicType> outputs = topics(sc.get("outputs"));

        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "conf-" + name);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        // The scenario's record cache (scenario.json's cache_bytes, 0 unless it says), or the
        // one compare's -cache-bytes gives every scenario.
        long cacheBytes = sc.has("cache_bytes") ? sc.get("cache_bytes").asLong() : 0;
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, Long.getLong("conformance.cacheBytes", cacheBytes));
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        if ("memory".equals(System.getProperty("conformance.stores"))) {
            props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG,
                    BuiltInDslStoreSuppliers.InMemoryDslStoreSuppliers.class);
        }

        try (BufferedReader r = Files.newBufferedReader(in, StandardCharsets.UTF_8);
             BufferedWriter w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            List<JsonNode> records = new ArrayList<>();
            JsonNode marker = null;
            int sequences = 0;
            for (String line; (line = r.readLine()) != null; ) {
                if (line.isBlank()) {
                    continue;
                }
                JsonNode n = JsonSerde.MAPPER.readTree(line);
                if (n.has("sequence")) {
                    sequences++;
                    if (marker != null) {
                        runSequence(def, props, inputs, outputs, marker, records, w);
                    }
                    marker = n;
                    records.clear();
                } else {
                    if (marker == null) {
                        throw new IllegalArgumentException(in + ": record before the first {\"sequence\": n} line");
                    }
                    records.add(n);
                }
            }
            if (marker != null) {
                runSequence(def, props, inputs, outputs, marker, records, w);
            }
            return sequences;
        }
    }

    private static void runSequence(java.util.function.Consumer<StreamsBuilder> def, Properties props,
                                    Map<String, TopicType> inputs, Map<String, TopicType> outputs,
                                    JsonNode marker, List<JsonNode> records, BufferedWriter w) throws IOException {
        w.write(JsonSerde.MAPPER.writeValueAsString(marker));
        w.newLine();
        StreamsBuilder b = new StreamsBuilder(new TopologyConfig(new StreamsConfig(props)));
        def.accept(b);
        try (TopologyTestDriver d = new TopologyTestDriver(b.build(props), props)) {
            Map<String, TestInputTopic<Object, Object>> in = new LinkedHashMap<>();
            inputs.forEach((t, ty) -> in.put(t, d.createInputTopic(t, ty.key.serializer(), ty.value.serializer())));
            Map<String, TestOutputTopic<Object, Object>> out = new LinkedHashMap<>();
            outputs.forEach((t, ty) -> out.put(t, d.createOutputTopic(t, ty.key.deserializer(), ty.value.deserializer())));
            for (JsonNode rec : records) {
                String topic = rec.path("topic").asText();
                TopicType ty = inputs.get(topic);
                if (ty == null) {
                    throw new IllegalArgumentException("sequence " + marker + ": unknown input topic " + topic);
                }
                Headers headers = new RecordHeaders();
                rec.path("headers").fields().forEachRemaining(
                        e -> headers.add(e.getKey(), e.getValue().asText().getBytes(StandardCharsets.UTF_8)));
                in.get(topic).pipeInput(new TestRecord<>(fromJson(ty.keyType, rec.get("key")),
                        fromJson(ty.valueType, rec.get("value")), headers, rec.path("timestamp").asLong()));
                for (var e : out.entrySet()) {
                    for (TestRecord<Object, Object> o : e.getValue().readRecordsToList()) {
                        w.write(JsonSerde.MAPPER.writeValueAsString(toJson(e.getKey(), o)));
                        w.newLine();
                    }
                }
            }
        } catch (RuntimeException e) {
            throw new IllegalStateException("sequence " + marker + " failed", e);
        }
    }

    private static ObjectNode toJson(String topic, TestRecord<Object, Object> o) {
        ObjectNode n = JSON.objectNode();
        n.put("topic", topic);
        if (o.key() instanceof Windowed<?> wk) {
            ObjectNode k = n.putObject("key");
            k.set("key", plain(wk.key()));
            k.put("start", wk.window().start());
            k.put("end", wk.window().end());
        } else {
            n.set("key", plain(o.key()));
        }
        n.set("value", plain(o.value()));
        n.put("timestamp", o.timestamp());
        if (o.headers().toArray().length > 0) {
            ObjectNode h = n.putObject("headers");
            for (Header header : o.headers()) {
                h.put(header.key(), new String(header.value(), StandardCharsets.UTF_8));
            }
        }
        return n;
    }

    private static JsonNode plain(Object v) {
        if (v == null) {
            return JSON.nullNode();
        } else if (v instanceof JsonNode n) {
            return n;
        } else if (v instanceof Long l) {
            return JSON.numberNode(l);
        } else if (v instanceof String s) {
            return JSON.textNode(s);
        }
        throw new IllegalArgumentException("unsupported output value " + v.getClass());
    }

    private static Object fromJson(String type, JsonNode n) {
        if (n == null || n.isNull()) {
            return null;
        }
        return switch (type) {
            case "string" -> n.asText();
            case "int64" -> n.asLong();
            default -> n; // a record
        };
    }

    private static Map<String, TopicType> topics(JsonNode list) {
        Map<String, TopicType> m = new LinkedHashMap<>();
        for (JsonNode t : list) {
            String kt = t.path("key").asText("string");
            String vt = t.path("value").asText();
            JsonNode win = t.get("window");
            Serde<Object> ks = serde(kt);
            if (win != null) {
                if (win.path("kind").asText().equals("session")) {
                    ks = cast(WindowedSerdes.sessionWindowedSerdeFrom(String.class));
                } else {
                    ks = cast(WindowedSerdes.timeWindowedSerdeFrom(String.class, win.path("size_ms").asLong()));
                }
            }
            m.put(t.path("name").asText(), new TopicType(ks, serde(vt), kt, vt));
        }
        return m;
    }

    private static Serde<Object> serde(String type) {
        return switch (type) {
            case "string" -> cast(Serdes.String());
            case "int64" -> cast(Serdes.Long());
            default -> cast(new JsonSerde());
        };
    }

    @SuppressWarnings("unchecked")
    private static Serde<Object> cast(Serde<?> s) {
        return (Serde<Object>) s;
    }

    /**
     * Every commit of the driver writes a checkpoint file and fsyncs its directory; on a disk
     * that costs milliseconds per input record, on tmpfs nothing. The stores are the default
     * (RocksDB) ones either way.
     */
    private static Path stateParent() {
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : null;
    }

    private static void deleteTree(Path p) throws IOException {
        try (var walk = Files.walk(p)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }
}
