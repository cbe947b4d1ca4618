package io.streamgen.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.CloseOptions;

/**
 * The Java side of the interop suite, driven by the Go harness (interop/run):
 *
 * <pre>
 *   produce BROKERS REGISTRY SCENARIO...          write the scenarios' inputs; prints "produced NAME N"
 *   streams BROKERS REGISTRY STATE_DIR RUN SCENARIO...
 *                                                 run each scenario's Kafka Streams twin (application
 *                                                 id interop-NAME-kstreams-RUN) until standard input closes
 *   produce-first BROKERS REGISTRY SCENARIO...    write the first half of takeover scenarios' inputs
 *                                                 (produce then writes the second half)
 *   streams-as BROKERS REGISTRY STATE_DIR NAME=APP_ID...
 *                                                 run each scenario's topology under the given
 *                                                 application id, writing its outputs themselves (no
 *                                                 suffix): the Kafka Streams application a takeover
 *                                                 scenario's streamgen app takes over from
 *   consume BROKERS REGISTRY SCENARIO...          print every record of the scenarios' output topics,
 *                                                 streamgen's and the twins', as canonical JSON lines
 *   list                                          the scenario names
 * </pre>
 *
 * REGISTRY is the registry's URL, or "-" when the scenarios need none.
 */
public final class Main {
  /** The suffix of a twin's output topic: it reads the same inputs as the streamgen app. */
  static final String TWIN = ".kstreams";

  private Main() {}

  static Map<String, Scenario> scenarios() {
    Map<String, Scenario> m = new LinkedHashMap<>();
    List<Scenario> all = new ArrayList<>(JsonScenarios.all());
    all.addAll(WindowedScenarios.all());
    all.addAll(AvroScenarios.all());
    all.addAll(ProtobufScenarios.all());
    all.addAll(JsonSchemaScenarios.all());
    all.addAll(SessionScenarios.all());
    all.addAll(TakeoverScenarios.all());
    for (Scenario s : all) {
      m.put(s.name(), s);
    }
    return m;
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 1 && args[0].equals("list")) {
      scenarios().keySet().forEach(System.out::println);
      return;
    }
    if (args.length < 3) {
      System.err.println("usage: Main produce|streams|consume BROKERS REGISTRY [STATE_DIR RUN] SCENARIO...");
      System.exit(2);
    }
    Env env = new Env(args[1], args[2].equals("-") ? null : args[2]);
    int first = args[0].equals("streams") ? 5 : args[0].equals("streams-as") ? 4 : 3;
    List<Scenario> picked = new ArrayList<>();
    List<String> appIds = new ArrayList<>();
    for (int i = first; i < args.length; i++) {
      String name = args[i];
      if (args[0].equals("streams-as")) {
        String[] pair = name.split("=", 2);
        name = pair[0];
        appIds.add(pair.length == 2 ? pair[1] : "");
      }
      Scenario s = scenarios().get(name);
      if (s == null) {
        System.err.println("interop: no Java side for scenario " + args[i]);
        System.exit(2);
      }
      picked.add(s);
    }
    switch (args[0]) {
      case "produce" -> {
        for (Scenario s : picked) {
          System.out.println("produced " + s.name() + " " + s.produce(env));
        }
      }
      case "produce-first" -> {
        for (Scenario s : picked) {
          System.out.println("produced " + s.name() + " " + s.produceFirst(env));
        }
      }
      case "streams" -> {
        List<String> ids = new ArrayList<>();
        for (Scenario s : picked) {
          ids.add("interop-" + s.name() + "-kstreams-" + args[4]);
        }
        streams(env, args[3], picked, ids, TWIN);
      }
      case "streams-as" -> streams(env, args[3], picked, appIds, "");
      case "consume" -> consume(env, picked);
      default -> {
        System.err.println("interop: unknown command " + args[0]);
        System.exit(2);
      }
    }
  }

  /**
   * streams runs the twins with the record cache off and exactly-once, as the Go harness runs
   * the streamgen apps, so both emit every update and the outputs compare record for record.
   */
  static void streams(
      Env env, String stateDir, List<Scenario> picked, List<String> appIds, String suffix)
      throws Exception {
    List<KafkaStreams> running = new ArrayList<>();
    CountDownLatch failed = new CountDownLatch(1);
    for (int i = 0; i < picked.size(); i++) {
      Scenario s = picked.get(i);
      StreamsBuilder b = new StreamsBuilder();
      s.topology(b, env, suffix);
      Properties p = new Properties();
      p.put(StreamsConfig.APPLICATION_ID_CONFIG, appIds.get(i));
      p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, env.brokers);
      p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir + "/" + s.name());
      p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
      p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
      p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
      // No wall-clock throttle on the emission of a left or outer join's unmatched records
      // (the harness runs the streamgen apps with --outer-join-emit-interval 0 too): with the
      // default 1 s, which records are emitted and when depends on how fast each side reads.
      p.put(StreamsConfig.InternalConfig.EMIT_INTERVAL_MS_KSTREAMS_OUTER_JOIN_SPURIOUS_RESULTS_FIX, 0L);
      p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
      KafkaStreams ks = new KafkaStreams(b.build(), p);
      ks.setUncaughtExceptionHandler(
          e -> {
            System.err.println("interop: Kafka Streams twin of " + s.name() + " failed: " + e);
            e.printStackTrace();
            failed.countDown();
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
          });
      ks.start();
      running.add(ks);
    }
    System.out.println("running");
    System.out.flush();
    Thread stdin =
        new Thread(
            () -> {
              try {
                while (System.in.read() >= 0) {}
              } catch (java.io.IOException e) {
                // A closed stdin ends the run like EOF.
              }
              failed.countDown();
            });
    stdin.setDaemon(true);
    stdin.start();
    failed.await();
    // Leaving the group on close is what a takeover needs (and what its guide tells users to
    // do): otherwise the members stay until their session times out, and a consumer of another
    // protocol cannot join the group before then.
    CloseOptions close =
        CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
            .withTimeout(Duration.ofSeconds(30));
    for (KafkaStreams ks : running) {
      ks.close(close);
    }
  }

  /**
   * consume reads every output topic from the start to its last committed record (read_committed:
   * the stable offset) and prints one line a record: scenario, side, topic, partition, offset, key
   * and the value in canonical JSON.
   */
  static void consume(Env env, List<Scenario> picked) throws Exception {
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, env.brokers);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    try (KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      for (Scenario s : picked) {
        for (String topic : s.outputs()) {
          for (String t : List.of(topic, topic + TWIN)) {
            drain(env, c, s, topic, t, out);
          }
        }
      }
    }
    out.flush();
  }

  static void drain(
      Env env, KafkaConsumer<byte[], byte[]> c, Scenario s, String topic, String t, PrintStream out)
      throws Exception {
    List<TopicPartition> tps = new ArrayList<>();
    for (PartitionInfo pi : c.partitionsFor(t)) {
      tps.add(new TopicPartition(t, pi.partition()));
    }
    c.assign(tps);
    c.seekToBeginning(tps);
    Map<TopicPartition, Long> end = new HashMap<>(c.endOffsets(tps));
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!done(c, end)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("interop: " + t + " not read to its end in 60s");
      }
      for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
        ObjectNode line = Env.JSON.createObjectNode();
        line.put("scenario", s.name());
        line.put("side", t.endsWith(TWIN) ? "kstreams" : "streamgen");
        line.put("topic", topic);
        line.put("partition", r.partition());
        line.put("offset", r.offset());
        line.put("key", s.decodeKey(topic, r.key()));
        JsonNode v = s.decode(env, topic, r.value());
        line.set("value", v);
        out.println(Env.JSON.writeValueAsString(line));
      }
    }
  }

  static boolean done(KafkaConsumer<?, ?> c, Map<TopicPartition, Long> end) {
    for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
      if (c.position(e.getKey()) < e.getValue()) {
        return false;
      }
    }
    return true;
  }
}
