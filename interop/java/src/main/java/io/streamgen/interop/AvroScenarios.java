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
    return List.of(new Agg());
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

  /** The twin's UserTotals, written with this schema to the twin's output topic. */
  static final Schema TOTALS =
      SchemaBuilder.record("UserTotals").namespace(NS).fields()
          .requiredLong("orders")
          .requiredDouble("total")
          .requiredInt("max_qty")
          .requiredLong("ref_sum")
          .requiredLong("gifts")
          .name("first_at").type(timestamp()).noDefault()
          .name("last_at").type(timestamp()).noDefault()
          .optionalString("last_order")
          .name("notes").type().map().values().stringType().noDefault()
          .endRecord();

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
    return r;
  }

  static Serializer<Object> serializer(Env env) {
    return Registry.serializer(new AvroKafkaSerializer<>(), env, Map.of());
  }

  static Serde<GenericRecord> serde(Env env) {
    return Registry.serde(new AvroSerde<>(), env, Map.of());
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

  /** The twin of NewTotals in interop/scenarios/avro-agg/funcs.go: every field at its zero. */
  static GenericRecord newTotals() {
    GenericRecord t = new GenericData.Record(TOTALS);
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

  /** The twin of AddOrder (JsonScenarios.addOrder on records); strings read back are Utf8. */
  static GenericRecord addOrder(String key, GenericRecord o, GenericRecord agg) {
    GenericRecord t = new GenericData.Record(TOTALS);
    for (Schema.Field f : TOTALS.getFields()) {
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
    return t;
  }
}
