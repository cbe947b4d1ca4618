package io.streamgen.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;

/**
 * session-windows: Confluent's SessionWindowsExample as published (play events counted per user
 * in 30-minute sessions with 23h30m grace, re-keyed "user@start->end" by map, written with the
 * Long serde). A late event merges two sessions, so the count emits tombstones for the merged-away
 * ones and map passes them on; the consumer reads values with Java's LongDeserializer, so a
 * tombstone is null and eight zero bytes would be 0.
 */
final class SessionScenarios {
  private SessionScenarios() {}

  static List<Scenario> all() {
    return List.of(new Sessions());
  }

  static final String INPUT = "session-windows.play-events";
  static final String OUTPUT = "session-windows.play-events-per-session";
  static final long BASE = 1_700_000_000_000L;
  static final int USERS = 20;

  static final class Sessions implements Scenario {
    public String name() {
      return "session-windows";
    }

    public List<String> outputs() {
      return List.of(OUTPUT);
    }

    /**
     * Per user, the issue's reproduction: plays at S, S+30m+1ms (a second session) and S+15m
     * (late, within grace, merging both), then one more play an hour later (a new session).
     */
    public int produce(Env env) throws Exception {
      long[] offsets = {0, Duration.ofMinutes(30).toMillis() + 1, Duration.ofMinutes(15).toMillis(),
          Duration.ofMinutes(90).toMillis()};
      int n = 0;
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        for (int u = 0; u < USERS; u++) {
          long s = BASE + u * Duration.ofHours(3).toMillis();
          for (int i = 0; i < offsets.length; i++) {
            ObjectNode e = Env.JSON.createObjectNode();
            e.put("song_id", 100 + u * 10 + i);
            e.put("duration", 60_000 + i);
            p.send(new ProducerRecord<>(INPUT, null, s + offsets[i], String.format("user%02d", u),
                Env.JSON.writeValueAsBytes(e))).get();
            n++;
          }
        }
      }
      return n;
    }

    public void topology(StreamsBuilder b, Env env, String suffix) {
      b.stream(INPUT, Consumed.with(Serdes.String(), JsonScenarios.SERDE))
          .groupByKey(Grouped.with(Serdes.String(), JsonScenarios.SERDE))
          .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMinutes(30), Duration.ofMinutes(23 * 60 + 30)))
          .count(Materialized.as("play-events-per-session"))
          .toStream()
          .map((key, value) -> new KeyValue<>(key.key() + "@" + key.window().start() + "->" + key.window().end(), value))
          .to(OUTPUT + suffix, Produced.with(Serdes.String(), Serdes.Long()));
    }

    public JsonNode decode(Env env, String topic, byte[] value) {
      try (LongDeserializer d = new LongDeserializer()) {
        Long v = d.deserialize(topic, value);
        return v == null ? NullNode.getInstance() : LongNode.valueOf(v);
      }
    }
  }
}
