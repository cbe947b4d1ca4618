package io.streamgen.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.apicurio.registry.serde.jsonschema.JsonSchemaKafkaDeserializer;
import io.apicurio.registry.serde.jsonschema.JsonSchemaKafkaSerializer;
import java.util.List;
import java.util.Map;
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
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The JSON Schema scenarios: values are Jackson trees written with Apicurio's JSON Schema
 * serializer, which registers (and validates against) the Java service's own document from the
 * classpath (src/main/resources/schemas), and read with its deserializer, which returns JsonNode.
 */
final class JsonSchemaScenarios {
  private JsonSchemaScenarios() {}

  static List<Scenario> all() {
    return List.of(new Agg());
  }

  /**
   * serializer writes with the document at the classpath location: Apicurio's JSON Schema
   * serializer has no schema of its own to derive from a JsonNode, so it needs one named
   * (or find-latest, or an explicit version), and validates every value against it.
   */
  static Serializer<JsonNode> serializer(Env env, String location) {
    return Registry.serializer(
        new JsonSchemaKafkaSerializer<>(),
        env,
        Map.of("apicurio.registry.artifact.schema.location", location, "apicurio.registry.serde.validation-enabled", true));
  }

  /**
   * deserializer validates every value against its writer's document, fetched by the framing's
   * id: the streamgen side's output against the JSON Schema streamgen registered for it.
   */
  static Deserializer<JsonNode> deserializer(Env env) {
    return Registry.deserializer(new JsonSchemaKafkaDeserializer<>(), env, Map.of("apicurio.registry.serde.validation-enabled", true));
  }

  /** jsonschema-agg: json-agg's orders and totals, each through the registry. */
  static final class Agg implements Scenario {
    private Deserializer<JsonNode> reader;

    public String name() {
      return "jsonschema-agg";
    }

    public List<String> outputs() {
      return List.of("jsonschema-agg.totals");
    }

    public int produce(Env env) throws Exception {
      Serializer<JsonNode> ser = serializer(env, "schemas/order.json");
      Random r = new Random(18);
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        for (int i = 0; i < 300; i++) {
          ObjectNode o = JsonScenarios.order(r, i);
          byte[] v = ser.serialize("jsonschema-agg.orders", o);
          long ts = JsonScenarios.millis(o.get("placed_at"));
          p.send(new ProducerRecord<>("jsonschema-agg.orders", null, ts, o.get("userId").asText(), v)).get();
        }
      }
      return 300;
    }

    /** The twin aggregates as json-agg's does; its store holds plain JSON, its output is registered. */
    public void topology(StreamsBuilder b, Env env, String suffix) {
      Serde<JsonNode> orders = Serdes.serdeFrom(serializer(env, "schemas/order.json"), deserializer(env));
      Serde<JsonNode> totals = Serdes.serdeFrom(serializer(env, "schemas/user-totals.json"), deserializer(env));
      b.stream("jsonschema-agg.orders", Consumed.with(Serdes.String(), orders))
          .groupByKey(Grouped.with(Serdes.String(), orders))
          .aggregate(JsonScenarios::newTotals, JsonScenarios::addOrder, Materialized.with(Serdes.String(), JsonScenarios.SERDE))
          .toStream()
          .to("jsonschema-agg.totals" + suffix, Produced.with(Serdes.String(), totals));
    }

    public JsonNode decode(Env env, String topic, byte[] value) {
      if (reader == null) {
        reader = deserializer(env);
      }
      return value == null ? null : Env.canonical(reader.deserialize(topic, value));
    }
  }
}
