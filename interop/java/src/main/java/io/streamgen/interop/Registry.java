package io.streamgen.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericEnumSymbol;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * What the registry scenarios share: the configuration of Apicurio's Kafka serdes, as a Java
 * service sets it up, and the conversion of the records they return into canonical JSON.
 */
final class Registry {
  private Registry() {}

  /**
   * apicurioUrl is the registry's native API, the only one Apicurio's 3.x Java serdes speak:
   * the Go side is given the Confluent-compatible URL (…/apis/ccompat/v7) of the same server.
   * Both name a schema by the same id (Apicurio's content id), which the serdes write in the
   * Confluent framing (magic byte 0, 4-byte id) by default.
   */
  static String apicurioUrl(Env env) {
    if (env.registry == null) {
      throw new IllegalStateException("interop: this scenario needs a schema registry");
    }
    int i = env.registry.indexOf("/apis/");
    return (i < 0 ? env.registry : env.registry.substring(0, i)) + "/apis/registry/v3";
  }

  /**
   * serdeConfig is what every serde of the suite is configured with: the registry, and
   * auto-registration of the writer's schema under the topic's subject (TopicNameStrategy,
   * Apicurio's TopicIdStrategy: artifact "<topic>-value" in the default group, which is the
   * subject the Confluent API shows).
   */
  static Map<String, Object> serdeConfig(Env env) {
    Map<String, Object> c = new HashMap<>();
    c.put("apicurio.registry.url", apicurioUrl(env));
    c.put("apicurio.registry.auto-register", true);
    return c;
  }

  /** config is serdeConfig plus a serde's own settings. */
  static Map<String, Object> config(Env env, Map<String, Object> extra) {
    Map<String, Object> c = serdeConfig(env);
    c.putAll(extra);
    return c;
  }

  /** serde, serializer and deserializer configure one of Apicurio's for values. */
  static <T> Serde<T> serde(Serde<T> s, Env env, Map<String, Object> extra) {
    s.configure(config(env, extra), false);
    return s;
  }

  static <T> Serializer<T> serializer(Serializer<T> s, Env env, Map<String, Object> extra) {
    s.configure(config(env, extra), false);
    return s;
  }

  static <T> Deserializer<T> deserializer(Deserializer<T> d, Env env, Map<String, Object> extra) {
    d.configure(config(env, extra), false);
    return d;
  }

  /**
   * forget deletes the subject, soft then permanently (a 404 is fine: nothing to forget), so
   * the versions a run registers are checked by the subject's rule again, not found registered
   * by an earlier run.
   */
  static void forget(Env env, String subject) throws java.io.IOException, InterruptedException {
    for (String q : new String[] {"", "?permanent=true"}) {
      java.net.http.HttpResponse<String> r =
          java.net.http.HttpClient.newHttpClient()
              .send(
                  java.net.http.HttpRequest.newBuilder(java.net.URI.create(env.registry + "/subjects/" + subject + q)).DELETE().build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() != 200 && r.statusCode() != 404) {
        throw new IllegalStateException("DELETE /subjects/" + subject + q + ": HTTP " + r.statusCode() + " " + r.body());
      }
    }
  }

  /**
   * compatibility sets the subject's compatibility rule through the Confluent API (the
   * registry's global rule here is NONE, which would accept any second version).
   */
  static void compatibility(Env env, String subject, String level) throws java.io.IOException, InterruptedException {
    java.net.http.HttpResponse<String> r =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(env.registry + "/config/" + subject))
                    .header("Content-Type", "application/vnd.schemaregistry.v1+json")
                    .PUT(java.net.http.HttpRequest.BodyPublishers.ofString("{\"compatibility\":\"" + level + "\"}"))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException("PUT /config/" + subject + ": HTTP " + r.statusCode() + " " + r.body());
    }
  }

  /**
   * protobufMessages fetches schema id from the registry (the Confluent API, as a Confluent
   * client does) and lists the top-level messages of its .proto text in order: the names the
   * framing's message indexes count.
   */
  static List<String> protobufMessages(Env env, int id) {
    try {
      java.net.http.HttpResponse<String> r =
          java.net.http.HttpClient.newHttpClient()
              .send(
                  java.net.http.HttpRequest.newBuilder(java.net.URI.create(env.registry + "/schemas/ids/" + id)).build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() != 200) {
        throw new IllegalStateException("schema " + id + ": HTTP " + r.statusCode() + " " + r.body());
      }
      JsonNode s = Env.JSON.readTree(r.body());
      if (!"PROTOBUF".equals(s.path("schemaType").asText())) {
        throw new IllegalStateException("schema " + id + " is not PROTOBUF: " + s.path("schemaType"));
      }
      List<String> names = new ArrayList<>();
      java.util.regex.Matcher m = TOP_MESSAGE.matcher(s.get("schema").asText());
      while (m.find()) {
        names.add(m.group(1));
      }
      return names;
    } catch (java.io.IOException | InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A message declared at the top level of a .proto file (nested ones are indented). */
  static final java.util.regex.Pattern TOP_MESSAGE = java.util.regex.Pattern.compile("(?m)^message\\s+(\\w+)");

  /**
   * json turns what Avro's generic API returns (records, maps, arrays, Utf8, ByteBuffer, enum
   * symbols, boxed numbers; timestamp-millis stays a long) into JSON, for Env.canonical.
   */
  static JsonNode json(Object v) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    if (v == null) {
      return f.nullNode();
    }
    if (v instanceof GenericRecord r) {
      ObjectNode o = f.objectNode();
      for (org.apache.avro.Schema.Field fd : r.getSchema().getFields()) {
        o.set(fd.name(), json(r.get(fd.name())));
      }
      return o;
    }
    if (v instanceof Map<?, ?> m) {
      ObjectNode o = f.objectNode();
      m.forEach((k, x) -> o.set(k.toString(), json(x)));
      return o;
    }
    if (v instanceof Collection<?> c) {
      ArrayNode a = f.arrayNode();
      c.forEach(x -> a.add(json(x)));
      return a;
    }
    if (v instanceof ByteBuffer b) {
      byte[] bs = new byte[b.remaining()];
      b.duplicate().get(bs);
      return f.textNode(Base64.getEncoder().encodeToString(bs));
    }
    if (v instanceof CharSequence || v instanceof GenericEnumSymbol<?>) {
      return f.textNode(v.toString());
    }
    if (v instanceof Boolean b) {
      return f.booleanNode(b);
    }
    if (v instanceof Integer i) {
      return f.numberNode(i);
    }
    if (v instanceof Long l) {
      return f.numberNode(l);
    }
    if (v instanceof Float x) {
      return f.numberNode(x);
    }
    if (v instanceof Double x) {
      return f.numberNode(x);
    }
    throw new IllegalArgumentException("interop: no JSON for " + v.getClass());
  }
}
