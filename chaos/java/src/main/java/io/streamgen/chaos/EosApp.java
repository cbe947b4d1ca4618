package io.streamgen.chaos;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.processor.StateRestoreListener;

/**
 * The chaos/eos topology (chaos/eos/streamgen.yaml, after Kafka's own EosTestClient) on Kafka
 * Streams, so the chaos harness can play its schedule on the Java original with the same input,
 * broker and verifier. It takes the flags the harness gives a streamgen instance and logs, on
 * standard error, the JSON lines the harness reads from one (chaos/proc.go): "state change",
 * "rebalance" with the active tasks, "restoring store" and "store restored". SIGTERM closes it
 * cleanly and it exits 0, as a streamgen instance does.
 */
public final class EosApp {
  private EosApp() {}

  public static void main(String[] args) throws Exception {
    Properties props = config(args);
    KafkaStreams streams = new KafkaStreams(topology(), props);
    CountDownLatch closed = new CountDownLatch(1);
    streams.setStateListener((to, from) -> {
      log("state change", "from", from.name(), "to", to.name());
      if (to == KafkaStreams.State.RUNNING) {
        log("rebalance", "tasks", activeTasks(streams));
      }
    });
    streams.setGlobalStateRestoreListener(new RestoreLog());
    streams.setUncaughtExceptionHandler(e -> {
      logLevel("ERROR", "stream thread failed", "error", String.valueOf(e));
      return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    });
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      streams.close(Duration.ofMinutes(1));
      log("stopped");
      closed.countDown();
      Runtime.getRuntime().halt(0); // a clean stop exits 0, not the JVM's 143 after SIGTERM
    }));
    log("starting", "application_id", props.getProperty(StreamsConfig.APPLICATION_ID_CONFIG));
    streams.start();
    closed.await();
  }

  /** The topology of chaos/eos: echo, min and sum by key, and max and count after a repartition. */
  static org.apache.kafka.streams.Topology topology() {
    StreamsBuilder b = new StreamsBuilder();
    KStream<String, Integer> data = b.stream("eos-data", Consumed.with(Serdes.String(), Serdes.Integer()));
    data.to("eos-echo", Produced.with(Serdes.String(), Serdes.Integer()));
    KGroupedStream<String, Integer> byKey = data.groupByKey();
    byKey.aggregate(() -> Integer.MAX_VALUE, (k, v, agg) -> Math.min(agg, v),
            Materialized.<String, Integer, org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>>as("min-store")
                .withKeySerde(Serdes.String()).withValueSerde(Serdes.Integer()))
        .toStream().to("eos-min", Produced.with(Serdes.String(), Serdes.Integer()));
    byKey.aggregate(() -> 0L, (k, v, agg) -> agg + v,
            Materialized.<String, Long, org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>>as("sum-store")
                .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
        .toStream().to("eos-sum", Produced.with(Serdes.String(), Serdes.Long()));
    KGroupedStream<String, Integer> repartitioned = data
        .repartition(Repartitioned.<String, Integer>as("data").withKeySerde(Serdes.String()).withValueSerde(Serdes.Integer()))
        .groupByKey();
    repartitioned.aggregate(() -> Integer.MIN_VALUE, (k, v, agg) -> Math.max(agg, v),
            Materialized.<String, Integer, org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>>as("max-store")
                .withKeySerde(Serdes.String()).withValueSerde(Serdes.Integer()))
        .toStream().to("eos-max", Produced.with(Serdes.String(), Serdes.Integer()));
    repartitioned.count(Materialized.as("cnt-store"))
        .toStream().to("eos-cnt", Produced.with(Serdes.String(), Serdes.Long()));
    return b.build();
  }

  /**
   * The Kafka Streams settings for the flags of a streamgen `run` command line (the first
   * argument, "run", is skipped). Settings not given keep Kafka Streams' defaults, except the
   * guarantee: chaos/eos's spec says exactly_once_v2 and a 5 s commit interval.
   */
  static Properties config(String[] args) {
    Properties p = new Properties();
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 5000);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.IntegerSerde.class);
    int i = args.length > 0 && args[0].equals("run") ? 1 : 0;
    for (; i < args.length; i++) {
      String flag = args[i];
      if (flag.equals("--log-format")) {
        i++; // always JSON lines
        continue;
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException("flag " + flag + " needs a value");
      }
      String v = args[++i];
      switch (flag) {
        case "--brokers" -> p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, v);
        case "--application-id" -> p.put(StreamsConfig.APPLICATION_ID_CONFIG, v);
        case "--state-dir" -> p.put(StreamsConfig.STATE_DIR_CONFIG, v);
        case "--group-instance-id" -> p.put(StreamsConfig.consumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), v);
        case "--session-timeout" -> p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), (int) millis(v));
        case "--commit-interval" -> p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, millis(v));
        case "--cache-bytes" -> p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, Long.parseLong(v));
        case "--standby-replicas" -> p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, Integer.parseInt(v));
        case "--max-warmup-replicas" -> p.put(StreamsConfig.MAX_WARMUP_REPLICAS_CONFIG, Integer.parseInt(v));
        case "--acceptable-recovery-lag" -> p.put(StreamsConfig.ACCEPTABLE_RECOVERY_LAG_CONFIG, Long.parseLong(v));
        case "--probing-rebalance-interval" -> p.put(StreamsConfig.PROBING_REBALANCE_INTERVAL_MS_CONFIG, probingInterval(millis(v)));
        case "--workers" -> p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, Integer.parseInt(v));
        default -> throw new IllegalArgumentException("flag " + flag + " has no Kafka Streams setting here");
      }
    }
    return p;
  }

  /**
   * probingInterval is ms, or Kafka Streams' smallest allowed probing interval (one minute) when ms
   * is shorter: the harness's short runs probe every few seconds, which Kafka Streams refuses.
   */
  static long probingInterval(long ms) {
    if (ms >= 60_000) {
      return ms;
    }
    log("setting raised", "setting", StreamsConfig.PROBING_REBALANCE_INTERVAL_MS_CONFIG, "asked_ms", ms, "used_ms", 60_000);
    return 60_000;
  }

  /** millis parses a Go duration of one unit: 500ms, 6s, 10m, 1h. */
  static long millis(String d) {
    String[][] units = {{"ms", "1"}, {"s", "1000"}, {"m", "60000"}, {"h", "3600000"}};
    for (String[] u : units) {
      if (d.endsWith(u[0]) && d.length() > u[0].length()
          && Character.isDigit(d.charAt(d.length() - u[0].length() - 1))) {
        double n = Double.parseDouble(d.substring(0, d.length() - u[0].length()));
        return (long) (n * Long.parseLong(u[1]));
      }
    }
    throw new IllegalArgumentException("duration " + d + ": want a number and ms, s, m or h");
  }

  static List<String> activeTasks(KafkaStreams streams) {
    List<String> ids = new ArrayList<>();
    for (ThreadMetadata t : streams.metadataForLocalThreads()) {
      for (TaskMetadata task : t.activeTasks()) {
        ids.add(task.taskId().toString());
      }
    }
    ids.sort(null);
    return ids;
  }

  /** RestoreLog logs restorations as streamgen does (runtime/sgkafka/restore.go). */
  static final class RestoreLog implements StateRestoreListener {
    private final Map<String, Instant> started = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public void onRestoreStart(TopicPartition tp, String store, long from, long to) {
      started.put(tp + "/" + store, Instant.now());
      log("restoring store", "store", store, "changelog", tp.topic(), "partition", tp.partition(),
          "from_offset", from, "to_offset", to);
    }

    @Override
    public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long n) {}

    @Override
    public void onRestoreEnd(TopicPartition tp, String store, long total) {
      Instant s = started.remove(tp + "/" + store);
      long took = s == null ? 0 : Duration.between(s, Instant.now()).toMillis();
      log("store restored", "store", store, "changelog", tp.topic(), "partition", tp.partition(),
          "records", total, "took", took + "ms");
    }
  }

  static void log(String msg, Object... kv) {
    logLevel("INFO", msg, kv);
  }

  /** logLevel writes one JSON line in the shape of Go's slog JSON handler. */
  static synchronized void logLevel(String level, String msg, Object... kv) {
    Map<String, Object> m = new TreeMap<>();
    for (int i = 0; i + 1 < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    StringBuilder b = new StringBuilder();
    b.append("{\"time\":\"").append(Instant.now()).append("\",\"level\":\"").append(level)
        .append("\",\"msg\":").append(quote(msg));
    m.forEach((k, v) -> b.append(',').append(quote(k)).append(':').append(json(v)));
    System.err.println(b.append('}'));
  }

  static String json(Object v) {
    if (v instanceof Number) {
      return v.toString();
    }
    if (v instanceof List<?> l) {
      StringBuilder b = new StringBuilder("[");
      for (int i = 0; i < l.size(); i++) {
        b.append(i > 0 ? "," : "").append(json(l.get(i)));
      }
      return b.append(']').toString();
    }
    return quote(String.valueOf(v));
  }

  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
