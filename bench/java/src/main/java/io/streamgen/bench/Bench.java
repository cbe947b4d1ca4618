package io.streamgen.bench;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * The Kafka Streams side of streamgen's benchmarks: the topologies of bench/scenarios, written
 * with the Kafka Streams DSL and Processor API as SimpleBenchmark wrote them. Like the Go
 * applications it prints "BENCH first", "BENCH progress" and "BENCH done" lines (unix µs) as it
 * counts input records against STREAMGEN_BENCH_EXPECT; bench/harness times those.
 *
 * <p>Usage: Bench --scenario NAME --brokers HOST:PORT --application-id ID --guarantee G
 * --commit-interval-ms N --cache-bytes N --state-dir DIR [--group-instance-id ID]
 */
public final class Bench {
  static final String SRC1 = "bench-src1";
  static final String SRC2 = "bench-src2";
  static final String SINK = "bench-sink";
  /** The many-partition input of manystores (the harness creates it with 48 partitions). */
  static final String SRC_MANY = "bench-src-many";

  static final AtomicLong COUNT = new AtomicLong();
  static long expect;
  static long step;

  static long nowMicros() {
    Instant t = Instant.now();
    return t.getEpochSecond() * 1_000_000L + t.getNano() / 1_000;
  }

  static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  /** Counts one processed input record, as probe.Hit does on the Go side. */
  static void hit(String key, byte[] value) {
    long c = COUNT.incrementAndGet();
    if (c == 1) {
      say("BENCH first " + nowMicros());
    }
    if (c == expect) {
      say("BENCH done " + c + " " + nowMicros());
    } else if (c % step == 0 && c < expect) {
      say("BENCH progress " + c + " " + nowMicros());
    }
  }

  /** SimpleBenchmark's streamprocesswithstatestore: get and put the key. */
  static final class KVProcessor implements Processor<String, byte[], Void, Void> {
    private KeyValueStore<String, byte[]> store;

    @Override
    public void init(ProcessorContext<Void, Void> ctx) {
      store = ctx.getStateStore("kv");
    }

    @Override
    public void process(Record<String, byte[]> r) {
      store.get(r.key());
      store.put(r.key(), r.value());
    }
  }

  /** SimpleBenchmark's streamprocesswithwindowstore, fetching the record's own key. */
  static final class WindowProcessor implements Processor<String, byte[], Void, Void> {
    private WindowStore<String, byte[]> store;
    long seen;

    @Override
    public void init(ProcessorContext<Void, Void> ctx) {
      store = ctx.getStateStore("ws");
    }

    @Override
    public void process(Record<String, byte[]> r) {
      long ts = r.timestamp();
      try (WindowStoreIterator<byte[]> it = store.fetch(r.key(), ts - 1000, ts)) {
        while (it.hasNext()) {
          it.next();
          seen++;
        }
      }
      store.put(r.key(), r.value(), ts);
    }
  }

  /** The topic read as a table materialized in store, each record counted as it arrives. */
  static KTable<String, byte[]> table(StreamsBuilder b, String topic, String store) {
    return b.<String, byte[]>stream(topic)
        .peek(Bench::hit)
        .toTable(Materialized.<String, byte[], KeyValueStore<Bytes, byte[]>>as(store));
  }

  static void build(String scenario, StreamsBuilder b) {
    switch (scenario) {
      case "streamprocess":
        b.<String, byte[]>stream(SRC1).foreach(Bench::hit);
        break;
      case "streamprocesswithsink":
        b.<String, byte[]>stream(SRC1).peek(Bench::hit).to(SINK);
        break;
      case "streamprocesswithstatestore":
        b.addStateStore(
            Stores.keyValueStoreBuilder(
                    Stores.persistentKeyValueStore("kv"), Serdes.String(), Serdes.ByteArray())
                .withCachingEnabled());
        b.<String, byte[]>stream(SRC1).peek(Bench::hit).process(KVProcessor::new, "kv");
        break;
      case "streamprocesswithwindowstore":
        b.addStateStore(
            Stores.windowStoreBuilder(
                    Stores.persistentWindowStore(
                        "ws", Duration.ofSeconds(3), Duration.ofSeconds(1), false),
                    Serdes.String(),
                    Serdes.ByteArray())
                .withCachingEnabled());
        b.<String, byte[]>stream(SRC1).peek(Bench::hit).process(WindowProcessor::new, "ws");
        break;
      case "streamcount":
        b.<String, byte[]>stream(SRC1)
            .peek(Bench::hit)
            .groupByKey()
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts"));
        break;
      case "streamcountwindowed":
        b.<String, byte[]>stream(SRC1)
            .peek(Bench::hit)
            .groupByKey()
            .windowedBy(
                TimeWindows.ofSizeWithNoGrace(Duration.ofSeconds(1))
                    .advanceBy(Duration.ofMillis(500)))
            .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("windowed-counts"));
        break;
      case "streamtablejoin":
        {
          KTable<String, byte[]> table = table(b, SRC2, "table");
          b.<String, byte[]>stream(SRC1)
              .peek(Bench::hit)
              .leftJoin(table, (l, r) -> l)
              .foreach((k, v) -> {});
          break;
        }
      case "streamstreamjoin":
        {
          KStream<String, byte[]> right = b.<String, byte[]>stream(SRC2).peek(Bench::hit);
          b.<String, byte[]>stream(SRC1)
              .peek(Bench::hit)
              .leftJoin(
                  right,
                  (l, r) -> l,
                  JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofSeconds(10)),
                  StreamJoined.<String, byte[], byte[]>as("join"))
              .foreach((k, v) -> {});
          break;
        }
      case "tabletablejoin":
        {
          KTable<String, byte[]> left = table(b, SRC1, "left");
          KTable<String, byte[]> right = table(b, SRC2, "right");
          left.leftJoin(right, (l, r) -> l).toStream().foreach((k, v) -> {});
          break;
        }
      case "manystores":
        {
          // Three stores per task, one sub-topology: no key change, so no repartition.
          KStream<String, byte[]> records = b.<String, byte[]>stream(SRC_MANY).peek(Bench::hit);
          records
              .groupByKey()
              .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts"));
          records
              .groupByKey()
              .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMinutes(1)))
              .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("windowed-counts"));
          records
              .groupByKey()
              .reduce(
                  (agg, v) -> v, Materialized.<String, byte[], KeyValueStore<Bytes, byte[]>>as("latest"));
          break;
        }
      default:
        throw new IllegalArgumentException("unknown scenario " + scenario);
    }
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> a = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("want --flag value pairs, got " + args[i]);
      }
      a.put(args[i].substring(2), args[i + 1]);
    }
    expect = Long.parseLong(System.getenv().getOrDefault("STREAMGEN_BENCH_EXPECT", "0"));
    step = Math.max(expect / 10, 1);

    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, a.get("application-id"));
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("brokers"));
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, a.get("guarantee"));
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, a.get("commit-interval-ms"));
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, a.get("cache-bytes"));
    p.put(StreamsConfig.STATE_DIR_CONFIG, a.get("state-dir"));
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    if (a.containsKey("group-instance-id")) {
      p.put(
          StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG),
          a.get("group-instance-id"));
    }
    if (a.containsKey("session-timeout-ms")) {
      p.put(
          StreamsConfig.mainConsumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG),
          a.get("session-timeout-ms"));
    }

    StreamsBuilder b = new StreamsBuilder();
    build(a.get("scenario"), b);
    KafkaStreams streams = new KafkaStreams(b.build(p), p);
    CountDownLatch stopped = new CountDownLatch(1);
    streams.setUncaughtExceptionHandler(
        e -> {
          System.err.println("BENCH error " + e);
          e.printStackTrace();
          return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler
              .StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
    // State changes on stderr (the harness keeps it as the run's log): where start-up time goes.
    streams.setStateListener(
        (now, before) -> System.err.println(Instant.now() + " state " + before + " -> " + now));
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  streams.close(Duration.ofSeconds(60));
                  stopped.countDown();
                }));
    streams.start();
    stopped.await();
  }
}
