package io.streamgen.interop;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** What every scenario needs: the broker, the registry (null without one), one Jackson mapper. */
final class Env {
  /**
   * Reads numbers as exact decimals, so int64 values past 2^53 and doubles keep every digit,
   * and writes big decimals plainly: canonical JSON compares numbers by value, not spelling.
   */
  static final ObjectMapper JSON =
      new ObjectMapper()
          .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
          .enable(com.fasterxml.jackson.core.JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN);

  final String brokers;
  final String registry;

  Env(String brokers, String registry) {
    this.brokers = brokers;
    this.registry = registry;
  }

  /** A producer of string keys and raw values: the scenario chooses the value serializer. */
  KafkaProducer<String, byte[]> producer() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
  }

  /**
   * canonical is the form both sides' outputs are compared in: object members sorted by name,
   * null members dropped (JSON readers treat absent and null alike), and numbers written by
   * value ("10.0", "10" and "1e1" are one number), so only differences a typed reader would see
   * remain.
   */
  static JsonNode canonical(JsonNode n) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    if (n == null || n.isNull() || n.isMissingNode()) {
      return f.nullNode();
    }
    if (n.isObject()) {
      List<String> names = new ArrayList<>();
      n.fieldNames().forEachRemaining(names::add);
      Collections.sort(names);
      ObjectNode o = f.objectNode();
      for (String name : names) {
        JsonNode v = n.get(name);
        if (!v.isNull()) {
          o.set(name, canonical(v));
        }
      }
      return o;
    }
    if (n.isArray()) {
      ArrayNode a = f.arrayNode();
      for (Iterator<JsonNode> it = n.elements(); it.hasNext(); ) {
        a.add(canonical(it.next()));
      }
      return a;
    }
    if (n.isNumber()) {
      BigDecimal d = n.decimalValue().stripTrailingZeros();
      return f.numberNode(d.scale() < 0 ? d.setScale(0) : d);
    }
    return n;
  }

  /** Parses JSON text with exact numbers. */
  static JsonNode parse(byte[] b) throws java.io.IOException {
    return JSON.readTree(b);
  }
}
