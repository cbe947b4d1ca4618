package io.streamgen.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.LongSerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.state.Stores;

/**
 * The takeover scenarios: a Kafka Streams application runs a topology under the streamgen app's
 * application id on the first half of the input (produceFirst) and stops; the streamgen app,
 * with the same id and store and topic names, takes over and processes the second half
 * (produce). The reference is this same topology run as a twin over all of the input. Each
 * input record makes one output record (caches are off), so a record processed twice, or state
 * not taken over, shows as a difference.
 */
final class TakeoverScenarios {
  private TakeoverScenarios() {}

  static List<Scenario> all() {
    return List.of(new Count("takeover-count"), new WindowedCount("takeover-windowed-count"), new Join(false), new Join(true),
        new Session(), new StreamJoin(false), new StreamJoin(true), new Count("takeover-back-count"),
        new WindowedCount("takeover-back-windowed-count"));
  }

  /**
   * base() is the run's epoch, which the Go harness passes to every Java command of one run: the
   * takeover's changelogs are Kafka Streams' own, with its retention (a window store's is its
   * retention plus a day), so records timestamped years ago would be deleted from them before
   * the streamgen app could restore them. Both halves and the twin see the same times.
   */
  static long base() {
    String ms = System.getenv("STREAMGEN_INTEROP_EPOCH_MS");
    if (ms == null || ms.isEmpty()) {
      throw new IllegalStateException("takeover scenarios need STREAMGEN_INTEROP_EPOCH_MS (the Go harness sets it)");
    }
    return Long.parseLong(ms);
  }

  /** Sends value (already serialized) to topic at ts. */
  static void send(KafkaProducer<String, byte[]> p, String topic, long ts, String key, byte[] value)
      throws Exception {
    p.send(new ProducerRecord<>(topic, null, ts, key, value)).get();
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] int64(long v) {
    try (LongSerializer s = new LongSerializer()) {
      return s.serialize("", v);
    }
  }

  static JsonNode decodeLong(String topic, byte[] value) {
    try (LongDeserializer d = new LongDeserializer()) {
      Long v = d.deserialize(topic, value);
      return v == null ? NullNode.getInstance() : LongNode.valueOf(v);
    }
  }

  static JsonNode decodeText(byte[] value) {
    return value == null ? NullNode.getInstance() : TextNode.valueOf(new String(value, StandardCharsets.UTF_8));
  }

  /**
   * takeover-count: Confluent's WordCount (a repartition by word, then count). takeover-back-count
   * is the same topology on its own topics, taken over the other way round (Kafka Streams after
   * the streamgen app).
   */
  static final class Count implements Scenario {
    static final String[] WORDS = {"kafka", "streams", "go", "state", "table", "window", "join",
        "topic", "offset", "commit", "store", "task"};
    final String name;
    final String input;
    final String output;

    Count(String name) {
      this.name = name;
      input = name + ".lines";
      output = name + ".counts";
    }

    public String name() {
      return name;
    }

    public List<String> outputs() {
      return List.of(output);
    }

    public int produceFirst(Env env) throws Exception {
      return lines(env, 0);
    }

    public int produce(Env env) throws Exception {
      return lines(env, 1);
    }

    /** Half h of 120 lines of one to four words (seeded, so both halves are fixed). */
    int lines(Env env, int h) throws Exception {
      Random r = new Random(41 + h);
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        for (int i = 0; i < 60; i++) {
          StringBuilder line = new StringBuilder();
          for (int w = 0, n = 1 + r.nextInt(4); w < n; w++) {
            line.append(w == 0 ? "" : " ").append(WORDS[r.nextInt(WORDS.length)].toUpperCase());
          }
          int n = h * 60 + i;
          send(p, input, base() + n * 1000L, "line-" + n, utf8(line.toString()));
        }
      }
      return 60;
    }

    public void topology(StreamsBuilder b, Env env, String suffix) {
      b.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
          .flatMapValues(v -> Arrays.asList(v.toLowerCase().split(" ")))
          .groupBy((k, w) -> w, Grouped.with("words", Serdes.String(), Serdes.String()))
          .count(Materialized.as("word-counts"))
          .toStream()
          .to(output + suffix, Produced.with(Serdes.String(), Serdes.Long()));
    }

    public JsonNode decode(Env env, String topic, byte[] value) {
      return decodeLong(topic, value);
    }
  }

  /**
   * takeover-windowed-count: clicks per user in one-minute tumbling windows (ten minutes grace).
   * The second half goes on in time and also sends clicks three minutes late, into windows the
   * first half opened; no click is ever past the grace, so nothing depends on when stream time
   * was last seen. takeover-back-windowed-count is the same on its own topics, the other way
   * round.
   */
  static final class WindowedCount implements Scenario {
    final String name;
    final String input;
    final String output;

    WindowedCount(String name) {
      this.name = name;
      input = name + ".clicks";
      output = name + ".per-minute";
    }

    public String name() {
      return name;
    }

    public List<String> outputs() {
      return List.of(output);
    }

    public int produceFirst(Env env) throws Exception {
      return clicks(env, 0);
    }

    public int produce(Env env) throws Exception {
      return clicks(env, 1);
    }

    int clicks(Env env, int h) throws Exception {
      Random r = new Random(17 + h);
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        for (int i = 0; i < 60; i++) {
          int n = h * 60 + i;
          long ts = base() + n * 7_000L;
          if (h == 1 && i % 5 == 0) {
            ts -= Duration.ofMinutes(3).toMillis();
          }
          send(p, input, ts, "user" + r.nextInt(8), utf8("click-" + n));
        }
      }
      return 60;
    }

    public void topology(StreamsBuilder b, Env env, String suffix) {
      b.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
          .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
          .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMinutes(1), Duration.ofMinutes(10)))
          .count(Materialized.as("clicks-per-minute"))
          .toStream()
          .map((k, v) -> KeyValue.pair(k.key() + "@" + k.window().start(), v))
          .to(output + suffix, Produced.with(Serdes.String(), Serdes.Long()));
    }

    public JsonNode decode(Env env, String topic, byte[] value) {
      return decodeLong(topic, value);
    }
  }

  /**
   * takeover-join: orders (quantities) left-joined with a table of prices. Every price is in the
   * first half, before its orders in time; the second half's orders join against the table
   * taken over. Products p10 and p11 have no price.
   *
   * <p>takeover-versioned (versioned = true) reads the prices into a versioned store (one hour of
   * history), so each order joins the price as of its own time: the even products' prices change
   * twenty seconds into the first half, and every fifth order of the second half is timestamped
   * back into the first half's range, so it joins a version, from before or after the change,
   * that only the versioned store's changelog, taken over, holds.
   */
  static final class Join implements Scenario {
    final boolean versioned;
    final String scenario, orders, prices, out;

    Join(boolean versioned) {
      this.versioned = versioned;
      this.scenario = versioned ? "takeover-versioned" : "takeover-join";
      this.orders = scenario + ".orders";
      this.prices = scenario + ".prices";
      this.out = scenario + ".totals";
    }

    public String name() {
      return scenario;
    }

    public List<String> outputs() {
      return List.of(out);
    }

    public int produceFirst(Env env) throws Exception {
      int n = 10;
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        for (int i = 0; i < 10; i++) {
          send(p, prices, base() - 100_000 + i, "p" + i, int64(10 * (i + 1)));
        }
        for (int i = 0; versioned && i < 10; i += 2, n++) {
          send(p, prices, base() + 20_500 + i, "p" + i, int64(10 * (i + 1) + 5));
        }
      }
      return n + orders(env, 0);
    }

    public int produce(Env env) throws Exception {
      return orders(env, 1);
    }

    int orders(Env env, int h) throws Exception {
      Random r = new Random(23 + h);
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        for (int i = 0; i < 40; i++) {
          int n = h * 40 + i;
          long ts = versioned && h == 1 && i % 5 == 0 ? base() + i * 1000L : base() + n * 1000L;
          send(p, orders, ts, "p" + r.nextInt(12), int64(1 + r.nextInt(9)));
        }
      }
      return 40;
    }

    public void topology(StreamsBuilder b, Env env, String suffix) {
      Materialized<String, Long, org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>> store = versioned
          ? Materialized.as(Stores.persistentVersionedKeyValueStore("prices-store", Duration.ofHours(1)))
          : Materialized.as("prices-store");
      KTable<String, Long> table =
          b.table(prices, Consumed.with(Serdes.String(), Serdes.Long()),
              store.withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()));
      b.stream(orders, Consumed.with(Serdes.String(), Serdes.Long()))
          .leftJoin(table, (qty, price) -> price == null
              ? qty + " x ?"
              : qty + " x " + price + " = " + (qty * price))
          .to(out + suffix, Produced.with(Serdes.String(), Serdes.String()));
    }

    public JsonNode decode(Env env, String topic, byte[] value) {
      return decodeText(value);
    }
  }

  /**
   * takeover-session: plays per user counted in five-minute sessions (one hour grace). Per user,
   * the first half plays at 0, 6 and 3 minutes (3 merges the sessions [0] and [6], leaving their
   * tombstones in the changelog), then at 20 and 28; the second half plays at 24 (merging the
   * first half's [20] and [28]), 10 (extending [0, 6]), 40 (a new session) and 8 (inside [0, 10]).
   * Users start two seconds apart, so no two records share a timestamp; every late play is within
   * the grace.
   */
  static final class Session implements Scenario {
    static final String IN = "takeover-session.plays";
    static final String OUT = "takeover-session.per-session";
    static final long[][] MINUTES = {{0, 6, 3, 20, 28}, {24, 10, 40, 8}};
    static final int USERS = 12;

    public String name() {
      return "takeover-session";
    }

    public List<String> outputs() {
      return List.of(OUT);
    }

    public int produceFirst(Env env) throws Exception {
      return plays(env, 0);
    }

    public int produce(Env env) throws Exception {
      return plays(env, 1);
    }

    int plays(Env env, int h) throws Exception {
      int n = 0;
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        for (long m : MINUTES[h]) {
          for (int u = 0; u < USERS; u++) {
            long ts = base() + u * 2_000L + Duration.ofMinutes(m).toMillis();
            send(p, IN, ts, String.format("user%02d", u), utf8("play-" + h + "-" + n++));
          }
        }
      }
      return n;
    }

    public void topology(StreamsBuilder b, Env env, String suffix) {
      b.stream(IN, Consumed.with(Serdes.String(), Serdes.String()))
          .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
          .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMinutes(5), Duration.ofHours(1)))
          .count(Materialized.as("plays-per-session"))
          .toStream()
          .map((k, v) -> KeyValue.pair(k.key() + "@" + k.window().start() + "->" + k.window().end(), v))
          .to(OUT + suffix, Produced.with(Serdes.String(), Serdes.Long()));
    }

    public JsonNode decode(Env env, String topic, byte[] value) {
      return decodeLong(topic, value);
    }
  }

  /**
   * takeover-stream-join: views and clicks of five ads, joined within five minutes (an inner
   * join, one minute grace). Records alternate between the two topics every 15 seconds, one
   * timestamp each, so each view joins about four clicks and the second half's first five
   * minutes join first-half records. The join stores are named with StreamJoined.withStoreName,
   * as an application that names its state would, and the spec's store: gives the streamgen app's
   * stores the same names (NAME-this-join-store, NAME-other-join-store).
   *
   * <p>takeover-left-join (left = true) is the left join of the same records, but every fourth
   * view is of an ad nobody clicks ("solo0".."solo2"), and the second half starts ten minutes
   * after the first: the views the first half left unmatched within their window wait in the
   * join's shared store (NAME-left-shared-join-store), and the streamgen app, restoring it, emits
   * them as "view+null" at its first record, as Kafka Streams does at the same record. Both sides
   * run without the emit throttle (Main, the harness), so what the join emits does not depend on
   * how fast it reads.
   */
  static final class StreamJoin implements Scenario {
    static final String NAME = "views-clicks";
    final boolean left;
    final String scenario, views, clicks, out;

    StreamJoin(boolean left) {
      this.left = left;
      this.scenario = left ? "takeover-left-join" : "takeover-stream-join";
      this.views = scenario + ".views";
      this.clicks = scenario + ".clicks";
      this.out = scenario + ".pairs";
    }

    public String name() {
      return scenario;
    }

    public List<String> outputs() {
      return List.of(out);
    }

    public int produceFirst(Env env) throws Exception {
      return events(env, 0);
    }

    public int produce(Env env) throws Exception {
      return events(env, 1);
    }

    int events(Env env, int h) throws Exception {
      long gap = left ? h * Duration.ofMinutes(10).toMillis() : 0;
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        for (int i = 0; i < 40; i++) {
          int n = h * 40 + i;
          boolean view = n % 2 == 0;
          String key = left && n % 8 == 0 ? "solo" + (n / 8) % 3 : "ad" + (n / 2) % 5;
          send(p, view ? views : clicks, base() + gap + n * 15_000L, key,
              utf8((view ? "view-" : "click-") + n));
        }
      }
      return 40;
    }

    public void topology(StreamsBuilder b, Env env, String suffix) {
      JoinWindows w = JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMinutes(5), Duration.ofMinutes(1));
      KStream<String, String> v = b.stream(views, Consumed.with(Serdes.String(), Serdes.String()));
      KStream<String, String> c = b.stream(clicks, Consumed.with(Serdes.String(), Serdes.String()));
      StreamJoined<String, String, String> named = StreamJoined.with(Serdes.String(), Serdes.String(), Serdes.String())
          .withStoreName(NAME)
          .withName(NAME);
      KStream<String, String> pairs = left
          ? v.leftJoin(c, (view, click) -> view + "+" + click, w, named)
          : v.join(c, (view, click) -> view + "+" + click, w, named);
      pairs.to(out + suffix, Produced.with(Serdes.String(), Serdes.String()));
    }

    public JsonNode decode(Env env, String topic, byte[] value) {
      return decodeText(value);
    }
  }
}
