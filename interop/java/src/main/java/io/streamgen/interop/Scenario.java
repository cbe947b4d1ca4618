package io.streamgen.interop;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.apache.kafka.streams.StreamsBuilder;

/**
 * One interop scenario's Java side: what its producer writes, its topology in Kafka Streams,
 * and how its consumer turns an output value into canonical JSON. The streamgen side is
 * interop/scenarios/NAME; both must read the same topics and compute the same records.
 */
interface Scenario {
  /** The scenario's name, its directory under interop/scenarios. */
  String name();

  /** The topics the streamgen app writes; the Kafka Streams twin writes each with suffix ".kstreams". */
  List<String> outputs();

  /** Writes the scenario's input topics and returns how many records it wrote. */
  int produce(Env env) throws Exception;

  /**
   * Writes the first half of a takeover scenario's input, which the Kafka Streams application
   * the streamgen app takes over from processes; produce then writes the second half. Other
   * scenarios write nothing here.
   */
  default int produceFirst(Env env) throws Exception {
    return 0;
  }

  /** Builds the Kafka Streams twin, writing each output topic with the given suffix. */
  void topology(StreamsBuilder b, Env env, String suffix);

  /** Decodes one value of an output topic (null for a tombstone) into its canonical JSON. */
  JsonNode decode(Env env, String topic, byte[] value) throws Exception;

  /**
   * Decodes one key of an output topic into the string the sides are compared by: UTF-8 text
   * unless the scenario's keys have another layout (windowed keys).
   */
  default String decodeKey(String topic, byte[] key) {
    return key == null ? null : new String(key, java.nio.charset.StandardCharsets.UTF_8);
  }
}
