package io.streamgen.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The plain JSON scenarios: values are JSON text written and read with Jackson, as a Java
 * service without a schema registry does. The topologies work on Jackson trees.
 */
final class JsonScenarios {
  private JsonScenarios() {}

  static List<Scenario> all() {
    return List.of(new Join(), new Agg());
  }

  /** Jackson as a Kafka serde: what a Java service's JSON topic reads and writes. */
  static final Serde<JsonNode> SERDE =
      Serdes.serdeFrom(
          (Serializer<JsonNode>) (topic, v) -> v == null ? null : write(v),
          (Deserializer<JsonNode>) (topic, b) -> b == null ? null : read(b));

  static byte[] write(JsonNode v) {
    try {
      return Env.JSON.writeValueAsBytes(v);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  static JsonNode read(byte[] b) {
    try {
      return Env.parse(b);
    } catch (java.io.IOException e) {
      throw new org.apache.kafka.common.errors.SerializationException(e);
    }
  }

  /** RFC 3339 in UTC with milliseconds, the json format's default for timestamps. */
  static final DateTimeFormatter RFC3339 =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  static final long BASE = 1_700_000_000_000L;
  static final String[] TIERS = {"BRONZE", "SILVER", "GOLD"};

  /** Epoch milliseconds of a JSON timestamp in either of the json format's forms. */
  static long millis(JsonNode n) {
    return n.isNumber() ? n.longValue() : Instant.parse(n.asText()).toEpochMilli();
  }

  static String user(int i) {
    return String.format("u%02d", i);
  }

  /** How many users the join scenarios' tables hold: 16 of the 20 that orders name. */
  static final int USERS = 16;

  /** profile is the i-th user: quotes and non-ASCII in names, 0 to 3 tags, 0 to 6 bytes of avatar. */
  static ObjectNode profile(Random r, int i) {
    ObjectNode u = Env.JSON.createObjectNode();
    u.put("id", user(i));
    u.put("name", "User " + i + (i % 4 == 0 ? " \"the first\" Ünal" : ""));
    u.put("tier", TIERS[i % 3]);
    var tags = u.putArray("tags");
    for (int t = 0; t < i % 4; t++) {
      tags.add("tag" + t);
    }
    byte[] avatar = new byte[i % 7];
    r.nextBytes(avatar);
    u.put("avatar", Base64.getEncoder().encodeToString(avatar));
    return u;
  }

  /**
   * order is the i-th order of a deterministic sequence: amounts with cents, int64 refs past
   * 2^53 (a reader through float64 would lose them), notes with quotes and non-ASCII text.
   */
  static ObjectNode order(Random r, int i) {
    ObjectNode o = Env.JSON.createObjectNode();
    o.put("id", String.format("o%04d", i));
    o.put("userId", user(r.nextInt(20)));
    o.put("amount", r.nextInt(100_000) / 100.0);
    o.put("qty", 1 + r.nextInt(5));
    o.put("ref", (1L << 54) + r.nextInt(1 << 20));
    o.put("placed_at", RFC3339.format(Instant.ofEpochMilli(BASE + i * 1000L + r.nextInt(500))));
    if (r.nextInt(3) == 0) {
      o.put("note", "note \"" + i + "\" für dich ✓");
    }
    o.put("gift", r.nextBoolean());
    return o;
  }

  /** Writes n orders to topic, keyed by user, each with its placed_at as the record timestamp. */
  static void produceOrders(KafkaProducer<String, byte[]> p, String topic, Random r, int n)
      throws Exception {
    for (int i = 0; i < n; i++) {
      ObjectNode o = order(r, i);
      long ts = millis(o.get("placed_at"));
      p.send(new ProducerRecord<>(topic, null, ts, o.get("userId").asText(), write(o))).get();
    }
  }

  /** json-join: orders left-joined with a table of users (16 of the 20 users orders name). */
  static final class Join implements Scenario {
    public String name() {
      return "json-join";
    }

    public List<String> outputs() {
      return List.of("json-join.enriched");
    }

    public int produce(Env env) throws Exception {
      Random r = new Random(14);
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        for (int i = 0; i < USERS; i++) {
          // Users come before every order, so both sides join against the full table.
          p.send(new ProducerRecord<>("json-join.users", null, BASE - 100_000 + i, user(i), write(profile(r, i))))
              .get();
        }
        produceOrders(p, "json-join.orders", r, 200);
      }
      return 216;
    }

    public void topology(StreamsBuilder b, Env env, String suffix) {
      KTable<String, JsonNode> users =
          b.table(
              "json-join.users",
              Consumed.with(Serdes.String(), SERDE),
              Materialized.<String, JsonNode, org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>>as("users-store")
                  .withKeySerde(Serdes.String())
                  .withValueSerde(SERDE));
      b.stream("json-join.orders", Consumed.with(Serdes.String(), SERDE))
          .leftJoin(users, JsonScenarios::enrich, Joined.with(Serdes.String(), SERDE, SERDE))
          .to("json-join.enriched" + suffix, Produced.with(Serdes.String(), SERDE));
    }

    public JsonNode decode(Env env, String topic, byte[] value) throws Exception {
      return value == null ? null : Env.canonical(Env.parse(value));
    }
  }

  /** The twin of Enrich in interop/scenarios/json-join/funcs.go. */
  static JsonNode enrich(String key, JsonNode o, JsonNode u) {
    ObjectNode e = Env.JSON.createObjectNode();
    e.put("order_id", o.get("id").asText());
    e.put("user_id", key);
    e.put("total", o.get("amount").doubleValue() * o.get("qty").intValue());
    e.put("ref", o.get("ref").longValue());
    e.put("placed_at", RFC3339.format(Instant.ofEpochMilli(millis(o.get("placed_at")))));
    if (o.hasNonNull("note")) {
      e.put("note", o.get("note").asText());
    }
    if (u == null) {
      e.putArray("tags");
      e.put("avatar", "");
      return e;
    }
    e.put("user_name", u.get("name").asText());
    e.put("tier", u.get("tier").asText());
    e.set("tags", u.get("tags"));
    e.set("avatar", u.get("avatar"));
    return e;
  }

  /** json-agg: orders summed per user into a table; every update is an output record. */
  static final class Agg implements Scenario {
    public String name() {
      return "json-agg";
    }

    public List<String> outputs() {
      return List.of("json-agg.totals");
    }

    public int produce(Env env) throws Exception {
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        produceOrders(p, "json-agg.orders", new Random(15), 300);
      }
      return 300;
    }

    public void topology(StreamsBuilder b, Env env, String suffix) {
      b.stream("json-agg.orders", Consumed.with(Serdes.String(), SERDE))
          .groupByKey(Grouped.with(Serdes.String(), SERDE))
          .aggregate(
              JsonScenarios::newTotals,
              JsonScenarios::addOrder,
              Materialized.with(Serdes.String(), SERDE))
          .toStream()
          .to("json-agg.totals" + suffix, Produced.with(Serdes.String(), SERDE));
    }

    public JsonNode decode(Env env, String topic, byte[] value) throws Exception {
      return value == null ? null : Env.canonical(Env.parse(value));
    }
  }

  /** The twin of NewTotals in interop/scenarios/json-agg/funcs.go: every field at its zero. */
  static JsonNode newTotals() {
    ObjectNode t = Env.JSON.createObjectNode();
    t.put("orders", 0L);
    t.put("total", 0.0);
    t.put("max_qty", 0);
    t.put("ref_sum", 0L);
    t.put("gifts", 0L);
    t.put("first_at", 0L);
    t.put("last_at", 0L);
    t.putObject("notes");
    return t;
  }

  /** The twin of AddOrder; timestamps are epoch milliseconds (json_timestamps: epoch_millis). */
  static JsonNode addOrder(String key, JsonNode o, JsonNode agg) {
    ObjectNode t = agg.deepCopy();
    long at = millis(o.get("placed_at"));
    long orders = agg.get("orders").longValue();
    if (orders == 0) {
      t.put("first_at", at);
    }
    t.put("orders", orders + 1);
    t.put("total", agg.get("total").doubleValue() + o.get("amount").doubleValue() * o.get("qty").intValue());
    t.put("max_qty", Math.max(agg.get("max_qty").intValue(), o.get("qty").intValue()));
    t.put("ref_sum", agg.get("ref_sum").longValue() + o.get("ref").longValue());
    if (o.get("gift").booleanValue()) {
      t.put("gifts", agg.get("gifts").longValue() + 1);
    }
    t.put("last_at", at);
    t.put("last_order", o.get("id").asText());
    if (o.hasNonNull("note")) {
      ((ObjectNode) t.get("notes")).put(o.get("id").asText(), o.get("note").asText());
    }
    return t;
  }
}
