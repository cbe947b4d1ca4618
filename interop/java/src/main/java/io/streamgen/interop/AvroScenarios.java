package io.streamgen.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.apicurio.registry.serde.avro.AvroKafkaDeserializer;
import io.apicurio.registry.serde.avro.AvroKafkaSerializer;
import io.apicurio.registry.serde.avro.AvroSerde;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The Avro scenarios: values are Avro GenericRecords written and read with Apicurio's Avro
 * serdes, each with the Java service's own schema (built here with SchemaBuilder, as a Java team
 * writes its .avsc), not the one streamgen generates: the two meet only through the registry and
 * Avro's schema resolution.
 */
final class AvroScenarios {
  private AvroScenarios() {}

  static List<Scenario> all() {
    return List.of(
        new Agg(),
        new Evolution("avro-evolution-new-writer", ORDER, TOTALS, 20),
        new Evolution("avro-evolution-old-writer", ORDER_V2, TOTALS_V2, 280));
  }

  static final String NS = "io.streamgen.interop";

  static Schema timestamp() {
    return LogicalTypes.timestampMillis().addToSchema(Schema.create(Schema.Type.LONG));
  }

  /** The Java service's Order: no defaults, the order streamgen's spec declares. */
  static final Schema ORDER =
      SchemaBuilder.record("Order").namespace(NS).fields()
          .requiredString("id")
          .requiredString("user_id")
          .requiredDouble("amount")
          .requiredInt("qty")
          .requiredLong("ref")
          .name("placed_at").type(timestamp()).noDefault()
          .optionalString("note")
          .requiredBoolean("gift")
          .endRecord();

  /**
   * Version 2 of the Java service's Order: `channel` (default "web") added in the middle and
   * `tags` (default empty) at the end, both compatible both ways under Avro's rules.
   */
  static final Schema ORDER_V2 =
      SchemaBuilder.record("Order").namespace(NS).fields()
          .requiredString("id")
          .requiredString("user_id")
          .requiredDouble("amount")
          .requiredInt("qty")
          .name("channel").type().stringType().stringDefault("web")
          .requiredLong("ref")
          .name("placed_at").type(timestamp()).noDefault()
          .optionalString("note")
          .requiredBoolean("gift")
          .name("tags").type().array().items().stringType().arrayDefault(List.of())
          .endRecord();

  /** totalsFields are the fields of the twins' UserTotals, still open for more. */
  static SchemaBuilder.FieldAssembler<Schema> totalsFields() {
    return SchemaBuilder.record("UserTotals").namespace(NS).fields()
        .requiredLong("orders")
        .requiredDouble("total")
        .requiredInt("max_qty")
        .requiredLong("ref_sum")
        .requiredLong("gifts")
        .name("first_at").type(timestamp()).noDefault()
        .name("last_at").type(timestamp()).noDefault()
        .optionalString("last_order")
        .name("notes").type().map().values().stringType().noDefault();
  }

  /** The twin's UserTotals, written with this schema to the twin's output topic. */
  static final Schema TOTALS = totalsFields().endRecord();

  /** The totals of avro-evolution-old-writer: TOTALS and the counts only version 2 has. */
  static final Schema TOTALS_V2 =
      totalsFields()
          .name("channels").type().map().values().longType().noDefault()
          .requiredLong("tag_count")
          .endRecord();

  /** The channels version-2 orders name: never "web", so a defaulted one shows in the counts. */
  static final String[] CHANNELS = {"app", "store", "phone"};

  /** order is JsonScenarios' i-th order as a record of schema s (Order or a version of it). */
  static GenericRecord order(Schema s, ObjectNode o) {
    GenericRecord r = new GenericData.Record(s);
    r.put("id", o.get("id").asText());
    r.put("user_id", o.get("userId").asText());
    r.put("amount", o.get("amount").doubleValue());
    r.put("qty", o.get("qty").intValue());
    r.put("ref", o.get("ref").longValue());
    r.put("placed_at", JsonScenarios.millis(o.get("placed_at")));
    r.put("note", o.hasNonNull("note") ? o.get("note").asText() : null);
    r.put("gift", o.get("gift").booleanValue());
    if (s.getField("channel") != null) {
      int i = Integer.parseInt(o.get("id").asText().substring(1));
      r.put("channel", CHANNELS[i % CHANNELS.length]);
      r.put("tags", List.of("t" + i % 5, "x").subList(0, i % 3 == 0 ? 0 : i % 3));
    }
    return r;
  }

  static Serializer<Object> serializer(Env env) {
    return Registry.serializer(new AvroKafkaSerializer<>(), env, Map.of());
  }

  static Serde<GenericRecord> serde(Env env) {
    return Registry.serde(new AvroSerde<>(), env, Map.of());
  }

  /**
   * resolving is how a Java service built from one version reads every version: Apicurio's
   * deserializer returns the record as its writer's schema (fetched by the framing's id) has it,
   * and Avro's own resolution (GenericDatumReader with writer and reader schemas) turns it into
   * the reader's: fields by name, defaults for the missing, the unknown skipped.
   */
  static Deserializer<GenericRecord> resolving(Env env, Schema reader) {
    Deserializer<GenericRecord> d = Registry.deserializer(new AvroKafkaDeserializer<>(), env, Map.of());
    return (topic, b) -> {
      GenericRecord w = d.deserialize(topic, b);
      if (w == null || w.getSchema().equals(reader)) {
        return w;
      }
      try {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        org.apache.avro.io.BinaryEncoder enc = org.apache.avro.io.EncoderFactory.get().directBinaryEncoder(out, null);
        new org.apache.avro.generic.GenericDatumWriter<GenericRecord>(w.getSchema()).write(w, enc);
        enc.flush();
        return new org.apache.avro.generic.GenericDatumReader<GenericRecord>(w.getSchema(), reader)
            .read(null, org.apache.avro.io.DecoderFactory.get().binaryDecoder(out.toByteArray(), null));
      } catch (java.io.IOException e) {
        throw new org.apache.kafka.common.errors.SerializationException(e);
      }
    };
  }

  /** decode is the Java consumer's reading of an output value: Apicurio's deserializer, as is. */
  static JsonNode decode(Deserializer<Object> d, String topic, byte[] value) {
    return value == null ? null : Env.canonical(Registry.json(d.deserialize(topic, value)));
  }

  /** avro-agg: orders summed per user into a table; every update is an output record. */
  static final class Agg implements Scenario {
    private Deserializer<Object> reader;

    public String name() {
      return "avro-agg";
    }

    public List<String> outputs() {
      return List.of("avro-agg.totals");
    }

    public int produce(Env env) throws Exception {
      Serializer<Object> ser = serializer(env);
      Random r = new Random(16);
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        for (int i = 0; i < 300; i++) {
          ObjectNode o = JsonScenarios.order(r, i);
          byte[] v = ser.serialize("avro-agg.orders", order(ORDER, o));
          long ts = JsonScenarios.millis(o.get("placed_at"));
          p.send(new ProducerRecord<>("avro-agg.orders", null, ts, o.get("userId").asText(), v)).get();
        }
      }
      return 300;
    }

    public void topology(StreamsBuilder b, Env env, String suffix) {
      Serde<GenericRecord> avro = serde(env);
      b.stream("avro-agg.orders", Consumed.with(Serdes.String(), avro))
          .groupByKey(Grouped.with(Serdes.String(), avro))
          .aggregate(AvroScenarios::newTotals, AvroScenarios::addOrder, Materialized.with(Serdes.String(), avro))
          .toStream()
          .to("avro-agg.totals" + suffix, Produced.with(Serdes.String(), avro));
    }

    public JsonNode decode(Env env, String topic, byte[] value) {
      if (reader == null) {
        reader = Registry.deserializer(new AvroKafkaDeserializer<>(), env, Map.of());
      }
      return AvroScenarios.decode(reader, topic, value);
    }
  }

  /**
   * Evolution: two versions of Order under one subject whose compatibility rule is FULL. The
   * producer writes the first `split` orders with version 1 and the rest with version 2, so both
   * are registered in that order;
   * the streamgen app's spec and the twin's reader schema are one of them (`reader`).
   */
  static final class Evolution implements Scenario {
    private final String name;
    private final Schema reader;
    private final Schema totals;
    private final int split;
    private Deserializer<Object> out;

    Evolution(String name, Schema reader, Schema totals, int split) {
      this.name = name;
      this.reader = reader;
      this.totals = totals;
      this.split = split;
    }

    public String name() {
      return name;
    }

    public List<String> outputs() {
      return List.of(name + ".totals");
    }

    public int produce(Env env) throws Exception {
      Serializer<Object> ser = serializer(env);
      Random r = new Random(19);
      String topic = name + ".orders";
      // Version 2 must be registrable over version 1 by the strictest non-transitive rule
      // (old readers read it, and it reads old records), and so must the app's own schema.
      Registry.forget(env, topic + "-value");
      Registry.compatibility(env, topic + "-value", "FULL");
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        for (int i = 0; i < 300; i++) {
          ObjectNode o = JsonScenarios.order(r, i);
          byte[] v = ser.serialize(topic, order(i < split ? ORDER : ORDER_V2, o));
          long ts = JsonScenarios.millis(o.get("placed_at"));
          p.send(new ProducerRecord<>(topic, null, ts, o.get("userId").asText(), v)).get();
        }
      }
      return 300;
    }

    public void topology(StreamsBuilder b, Env env, String suffix) {
      Serde<GenericRecord> in = Serdes.serdeFrom(Registry.serializer(new AvroKafkaSerializer<GenericRecord>(), env, Map.of()), resolving(env, reader));
      Serde<GenericRecord> avro = serde(env);
      b.stream(name + ".orders", Consumed.with(Serdes.String(), in))
          .groupByKey(Grouped.with(Serdes.String(), in))
          .aggregate(() -> newTotals(totals), (k, o, agg) -> addOrder(k, o, agg), Materialized.with(Serdes.String(), avro))
          .toStream()
          .to(name + ".totals" + suffix, Produced.with(Serdes.String(), avro));
    }

    public JsonNode decode(Env env, String topic, byte[] value) {
      if (out == null) {
        out = Registry.deserializer(new AvroKafkaDeserializer<>(), env, Map.of());
      }
      return AvroScenarios.decode(out, topic, value);
    }
  }

  static GenericRecord newTotals() {
    return newTotals(TOTALS);
  }

  /**
   * The twin of NewTotals in interop/scenarios/avro-agg/funcs.go (and the evolution scenarios'):
   * every field at its zero.
   */
  static GenericRecord newTotals(Schema schema) {
    GenericRecord t = new GenericData.Record(schema);
    if (schema.getField("channels") != null) {
      t.put("channels", new HashMap<String, Object>());
      t.put("tag_count", 0L);
    }
    t.put("orders", 0L);
    t.put("total", 0.0);
    t.put("max_qty", 0);
    t.put("ref_sum", 0L);
    t.put("gifts", 0L);
    t.put("first_at", 0L);
    t.put("last_at", 0L);
    t.put("last_order", null);
    t.put("notes", new HashMap<String, Object>());
    return t;
  }

  /**
   * The twin of AddOrder (JsonScenarios.addOrder on records; avro-evolution-old-writer's also
   * counts channels and tags); strings read back are Utf8.
   */
  static GenericRecord addOrder(String key, GenericRecord o, GenericRecord agg) {
    Schema schema = agg.getSchema();
    GenericRecord t = new GenericData.Record(schema);
    for (Schema.Field f : schema.getFields()) {
      t.put(f.name(), agg.get(f.name()));
    }
    long at = (Long) o.get("placed_at");
    long orders = (Long) agg.get("orders");
    if (orders == 0) {
      t.put("first_at", at);
    }
    double amount = (Double) o.get("amount");
    int qty = (Integer) o.get("qty");
    t.put("orders", orders + 1);
    t.put("total", (Double) agg.get("total") + amount * qty);
    t.put("max_qty", Math.max((Integer) agg.get("max_qty"), qty));
    t.put("ref_sum", (Long) agg.get("ref_sum") + (Long) o.get("ref"));
    if ((Boolean) o.get("gift")) {
      t.put("gifts", (Long) agg.get("gifts") + 1);
    }
    t.put("last_at", at);
    t.put("last_order", o.get("id").toString());
    Map<String, Object> notes = new HashMap<>();
    ((Map<?, ?>) agg.get("notes")).forEach((k, v) -> notes.put(k.toString(), v.toString()));
    if (o.get("note") != null) {
      notes.put(o.get("id").toString(), o.get("note").toString());
    }
    t.put("notes", notes);
    if (schema.getField("channels") != null) {
      Map<String, Object> channels = new HashMap<>();
      ((Map<?, ?>) agg.get("channels")).forEach((k, v) -> channels.put(k.toString(), v));
      channels.merge(o.get("channel").toString(), 1L, (a, x) -> (Long) a + 1L);
      t.put("channels", channels);
      t.put("tag_count", (Long) agg.get("tag_count") + ((java.util.Collection<?>) o.get("tags")).size());
    }
    return t;
  }
}
