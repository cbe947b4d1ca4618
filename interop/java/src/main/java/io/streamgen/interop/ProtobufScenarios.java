package io.streamgen.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import com.google.protobuf.Timestamp;
import com.google.protobuf.util.JsonFormat;
import io.apicurio.registry.serde.protobuf.ProtobufKafkaSerializer;
import java.util.Base64;
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
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The Protobuf scenarios: values are DynamicMessages written and read with Apicurio's Protobuf
 * serializer. The Java service's descriptors are its own (built here as protoc would from one
 * shop.proto, field names and numbers as the spec's); readers parse a value with their own
 * descriptor, as code generated from a .proto does.
 */
final class ProtobufScenarios {
  private ProtobufScenarios() {}

  static List<Scenario> all() {
    return List.of(new Join());
  }

  /**
   * The Confluent framing: the message indexes after the id, and not Apicurio's own "type ref"
   * (the message name as a length-prefixed Ref message), which only Apicurio reads.
   */
  static final Map<String, Object> FRAMING =
      Map.of("apicurio.registry.serde.send-type-ref", false, "apicurio.registry.serde.send-indexes", true);

  static final String TS = ".google.protobuf.Timestamp";
  static final String TIER = ".io.streamgen.interop.Tier";

  /**
   * shop.proto of the Java service: every message in one file, so the framing's message indexes
   * name them ([1] for an Order, [2] for an EnrichedOrder), as Confluent's and Apicurio's
   * serializers write them for such a file.
   */
  static final FileDescriptor SHOP =
      file(
          "shop",
          message(
              "User",
              field("id", 1, Type.TYPE_STRING),
              field("name", 2, Type.TYPE_STRING),
              ref("tier", 3, Type.TYPE_ENUM, TIER),
              repeated("tags", 4, Type.TYPE_STRING),
              field("avatar", 5, Type.TYPE_BYTES)),
          message(
              "Order",
              field("id", 1, Type.TYPE_STRING),
              field("user_id", 2, Type.TYPE_STRING),
              field("amount", 3, Type.TYPE_DOUBLE),
              field("qty", 4, Type.TYPE_INT32),
              field("ref", 5, Type.TYPE_INT64),
              ref("placed_at", 6, Type.TYPE_MESSAGE, TS),
              optional(field("note", 7, Type.TYPE_STRING)),
              field("gift", 8, Type.TYPE_BOOL)),
          message(
              "EnrichedOrder",
              field("order_id", 1, Type.TYPE_STRING),
              field("user_id", 2, Type.TYPE_STRING),
              field("total", 3, Type.TYPE_DOUBLE),
              field("ref", 4, Type.TYPE_INT64),
              ref("placed_at", 5, Type.TYPE_MESSAGE, TS),
              optional(field("note", 6, Type.TYPE_STRING)),
              optional(field("user_name", 7, Type.TYPE_STRING)),
              optional(ref("tier", 8, Type.TYPE_ENUM, TIER)),
              repeated("tags", 9, Type.TYPE_STRING),
              field("avatar", 10, Type.TYPE_BYTES)));

  static final Descriptor USER = SHOP.findMessageTypeByName("User");
  static final Descriptor ORDER = SHOP.findMessageTypeByName("Order");
  static final Descriptor ENRICHED = SHOP.findMessageTypeByName("EnrichedOrder");

  static FieldDescriptorProto.Builder field(String name, int number, Type t) {
    return FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(t).setLabel(Label.LABEL_OPTIONAL);
  }

  static FieldDescriptorProto.Builder ref(String name, int number, Type t, String typeName) {
    return field(name, number, t).setTypeName(typeName);
  }

  static FieldDescriptorProto.Builder repeated(String name, int number, Type t) {
    return field(name, number, t).setLabel(Label.LABEL_REPEATED);
  }

  /** optional marks a proto3 `optional` field: explicit presence, through a synthetic oneof. */
  static FieldDescriptorProto.Builder optional(FieldDescriptorProto.Builder f) {
    return f.setProto3Optional(true);
  }

  static DescriptorProto message(String name, FieldDescriptorProto.Builder... fields) {
    DescriptorProto.Builder m = DescriptorProto.newBuilder().setName(name);
    for (FieldDescriptorProto.Builder f : fields) {
      if (f.getProto3Optional()) {
        f.setOneofIndex(m.getOneofDeclCount());
        m.addOneofDecl(OneofDescriptorProto.newBuilder().setName("_" + f.getName()));
      }
      m.addField(f);
    }
    return m.build();
  }

  /** file is the Java service's NAME.proto holding messages ms and the Tier enum, as protoc builds it. */
  static FileDescriptor file(String name, DescriptorProto... ms) {
    EnumDescriptorProto.Builder tier = EnumDescriptorProto.newBuilder().setName("Tier");
    for (int i = 0; i < JsonScenarios.TIERS.length; i++) {
      tier.addValue(EnumValueDescriptorProto.newBuilder().setName(JsonScenarios.TIERS[i]).setNumber(i));
    }
    FileDescriptorProto.Builder f =
        FileDescriptorProto.newBuilder()
            .setName("io/streamgen/interop/" + name + ".proto")
            .setPackage("io.streamgen.interop")
            .setSyntax("proto3")
            .addDependency("google/protobuf/timestamp.proto")
            .addEnumType(tier);
    for (DescriptorProto m : ms) {
      f.addMessageType(m);
    }
    try {
      return FileDescriptor.buildFrom(f.build(), new FileDescriptor[] {Timestamp.getDescriptor().getFile()});
    } catch (com.google.protobuf.Descriptors.DescriptorValidationException e) {
      throw new IllegalStateException(e);
    }
  }

  static Timestamp timestamp(long millis) {
    return Timestamp.newBuilder().setSeconds(Math.floorDiv(millis, 1000)).setNanos((int) Math.floorMod(millis, 1000) * 1_000_000).build();
  }

  static DynamicMessage order(ObjectNode o) {
    DynamicMessage.Builder m = DynamicMessage.newBuilder(ORDER);
    set(m, "id", o.get("id").asText());
    set(m, "user_id", o.get("userId").asText());
    set(m, "amount", o.get("amount").doubleValue());
    set(m, "qty", o.get("qty").intValue());
    set(m, "ref", o.get("ref").longValue());
    set(m, "placed_at", timestamp(JsonScenarios.millis(o.get("placed_at"))));
    if (o.hasNonNull("note")) {
      set(m, "note", o.get("note").asText());
    }
    set(m, "gift", o.get("gift").booleanValue());
    return m.build();
  }

  static DynamicMessage user(ObjectNode u) {
    DynamicMessage.Builder m = DynamicMessage.newBuilder(USER);
    set(m, "id", u.get("id").asText());
    set(m, "name", u.get("name").asText());
    set(m, "tier", USER.findFieldByName("tier").getEnumType().findValueByName(u.get("tier").asText()));
    for (JsonNode t : u.get("tags")) {
      m.addRepeatedField(USER.findFieldByName("tags"), t.asText());
    }
    set(m, "avatar", ByteString.copyFrom(Base64.getDecoder().decode(u.get("avatar").asText())));
    return m.build();
  }

  static void set(DynamicMessage.Builder m, String name, Object v) {
    m.setField(m.getDescriptorForType().findFieldByName(name), v);
  }

  static Object get(Message m, String name) {
    return m.getField(m.getDescriptorForType().findFieldByName(name));
  }

  static boolean has(Message m, String name) {
    return m.hasField(m.getDescriptorForType().findFieldByName(name));
  }

  static Serializer<Message> serializer(Env env) {
    return Registry.serializer(new ProtobufKafkaSerializer<>(), env, FRAMING);
  }

  /**
   * reader reads the Confluent framing as Confluent's KafkaProtobufDeserializer does, then parses
   * the message with the reader's own descriptor, as code generated from a .proto does. Not
   * Apicurio's ProtobufKafkaDeserializer: 3.1.7 reads the message indexes but then ignores them
   * (it finds the message by its own type ref, or misreads the payload as one: a
   * NullPointerException), so it reads only what its own serializer writes with the type ref,
   * which no Confluent-format reader (streamgen's included) accepts. The id must name a schema
   * the registry holds whose message at the framing's index is the reader's message.
   */
  static Deserializer<Message> reader(Env env, Descriptor own) {
    Map<Integer, List<String>> messages = new java.util.concurrent.ConcurrentHashMap<>();
    return (topic, b) -> {
      if (b == null) {
        return null;
      }
      try {
        if (b.length < 5 || b[0] != 0) {
          throw new IllegalArgumentException("not the Confluent framing");
        }
        int id = java.nio.ByteBuffer.wrap(b, 1, 4).getInt();
        com.google.protobuf.CodedInputStream in = com.google.protobuf.CodedInputStream.newInstance(b, 5, b.length - 5);
        int n = in.readSInt32();
        int index = n == 0 ? 0 : in.readSInt32();
        if (n > 1) {
          throw new IllegalArgumentException("a nested message (indexes of depth " + n + ")");
        }
        List<String> names = messages.computeIfAbsent(id, i -> Registry.protobufMessages(env, i));
        if (index >= names.size() || !names.get(index).equals(own.getName())) {
          throw new IllegalArgumentException("schema " + id + " message " + index + " is not " + own.getName() + " (" + names + ")");
        }
        return DynamicMessage.parseFrom(own, in);
      } catch (Exception e) {
        throw new org.apache.kafka.common.errors.SerializationException("interop: " + topic + ": " + e.getMessage(), e);
      }
    };
  }

  static Serde<Message> serde(Env env, Descriptor own) {
    return Serdes.serdeFrom(serializer(env), reader(env, own));
  }

  /** json is the canonical JSON of a message: protobuf-java-util's JsonFormat, proto field names. */
  static JsonNode json(Message m) throws Exception {
    return m == null ? null : Env.canonical(Env.JSON.readTree(JsonFormat.printer().preservingProtoFieldNames().print(m)));
  }

  /** protobuf-join: orders left-joined with a table of users (16 of the 20 users orders name). */
  static final class Join implements Scenario {
    private Deserializer<Message> reader;

    public String name() {
      return "protobuf-join";
    }

    public List<String> outputs() {
      return List.of("protobuf-join.enriched");
    }

    public int produce(Env env) throws Exception {
      Serializer<Message> ser = serializer(env);
      Random r = new Random(17);
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        for (int i = 0; i < JsonScenarios.USERS; i++) {
          byte[] v = ser.serialize("protobuf-join.users", user(JsonScenarios.profile(r, i)));
          p.send(new ProducerRecord<>("protobuf-join.users", null, JsonScenarios.BASE - 100_000 + i, JsonScenarios.user(i), v)).get();
        }
        for (int i = 0; i < 200; i++) {
          ObjectNode o = JsonScenarios.order(r, i);
          byte[] v = ser.serialize("protobuf-join.orders", order(o));
          long ts = JsonScenarios.millis(o.get("placed_at"));
          p.send(new ProducerRecord<>("protobuf-join.orders", null, ts, o.get("userId").asText(), v)).get();
        }
      }
      return JsonScenarios.USERS + 200;
    }

    public void topology(StreamsBuilder b, Env env, String suffix) {
      Serde<Message> users = serde(env, USER);
      KTable<String, Message> table =
          b.table(
              "protobuf-join.users",
              Consumed.with(Serdes.String(), users),
              Materialized.<String, Message, org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>>as("users-store")
                  .withKeySerde(Serdes.String())
                  .withValueSerde(users));
      Serde<Message> orders = serde(env, ORDER);
      b.stream("protobuf-join.orders", Consumed.with(Serdes.String(), orders))
          .leftJoin(table, ProtobufScenarios::enrich, Joined.with(Serdes.String(), orders, users))
          .to("protobuf-join.enriched" + suffix, Produced.with(Serdes.String(), serde(env, ENRICHED)));
    }

    public JsonNode decode(Env env, String topic, byte[] value) throws Exception {
      if (reader == null) {
        reader = reader(env, ENRICHED);
      }
      return json(reader.deserialize(topic, value));
    }
  }

  /** The twin of Enrich in interop/scenarios/protobuf-join/funcs.go. */
  static Message enrich(String key, Message o, Message u) {
    DynamicMessage.Builder e = DynamicMessage.newBuilder(ENRICHED);
    set(e, "order_id", get(o, "id"));
    set(e, "user_id", key);
    set(e, "total", (Double) get(o, "amount") * (Integer) get(o, "qty"));
    set(e, "ref", get(o, "ref"));
    set(e, "placed_at", get(o, "placed_at"));
    if (has(o, "note")) {
      set(e, "note", get(o, "note"));
    }
    if (u != null) {
      set(e, "user_name", get(u, "name"));
      set(e, "tier", ENRICHED.findFieldByName("tier").getEnumType().findValueByNumber(((com.google.protobuf.Descriptors.EnumValueDescriptor) get(u, "tier")).getNumber()));
      set(e, "tags", get(u, "tags"));
      set(e, "avatar", get(u, "avatar"));
    }
    return e.build();
  }
}
