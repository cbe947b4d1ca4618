package io.streamgen.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindowedDeserializer;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * Scenarios whose output keys are windowed: the consumer reads them with Kafka Streams' own
 * TimeWindowedDeserializer, as a Java service reading a windowed topic does.
 */
final class WindowedScenarios {
  private WindowedScenarios() {}

  static List<Scenario> all() {
    return List.of(new TopArticles());
  }

  static final Duration WINDOW = Duration.ofHours(1);

  /**
   * json-top-articles: Confluent's TopArticlesLambdaExample as published, with Jackson trees for
   * its Avro records. TimeWindows.of(1h), removed in Kafka 4, gave a grace of 24h minus the size.
   */
  static final class TopArticles implements Scenario {
    static final String IN = "json-top-articles.PageViews";
    static final String OUT = "json-top-articles.TopNewsPerIndustry";
    static final String[] USERS = {"jo", "lauren", "tim", "sam"};
    static final String[] PAGES = {"index.html", "news.html", "contact.html", "about.html", "blog.html", "jobs.html"};
    static final String[] INDUSTRIES = {"eng", "science", "sport"};
    static final String[] FLAGS = {"ARTICLE", "ARTICLE", "ARTICLE,FRONT", "ADVERT", "VIDEO"};

    /** TimeWindowedDeserializer through WindowedSerdes, with the window size the app uses. */
    final Deserializer<Windowed<String>> keys =
        WindowedSerdes.timeWindowedSerdeFrom(String.class, WINDOW.toMillis()).deserializer();

    public String name() {
      return "json-top-articles";
    }

    public List<String> outputs() {
      return List.of(OUT);
    }

    /** 300 page views over about 10 hours, some out of order by up to 20 minutes. */
    public int produce(Env env) throws Exception {
      Random r = new Random(21);
      try (KafkaProducer<String, byte[]> p = env.producer()) {
        for (int i = 0; i < 300; i++) {
          ObjectNode v = Env.JSON.createObjectNode();
          String user = USERS[r.nextInt(USERS.length)];
          v.put("user", user);
          v.put("page", PAGES[r.nextInt(PAGES.length)]);
          v.put("industry", INDUSTRIES[r.nextInt(INDUSTRIES.length)]);
          if (r.nextInt(10) > 0) {
            v.put("flags", FLAGS[r.nextInt(FLAGS.length)]);
          }
          long ts = JsonScenarios.BASE + i * 120_000L - r.nextInt(1_200_000);
          p.send(new ProducerRecord<>(IN, null, ts, user, JsonScenarios.write(v))).get();
        }
      }
      return 300;
    }

    public void topology(StreamsBuilder b, Env env, String suffix) {
      Serde<JsonNode> json = JsonScenarios.SERDE;
      Serde<Windowed<String>> windowedStringSerde = WindowedSerdes.timeWindowedSerdeFrom(String.class, WINDOW.toMillis());
      KTable<Windowed<JsonNode>, Long> viewCounts =
          b.stream(IN, Consumed.with(Serdes.String(), json))
              .filter((dummy, record) -> isArticle(record))
              .map(
                  (dummy, article) -> {
                    ObjectNode clone = Env.JSON.createObjectNode();
                    clone.put("user", "user");
                    clone.set("page", article.get("page"));
                    clone.set("industry", article.get("industry"));
                    return new KeyValue<JsonNode, JsonNode>(clone, clone);
                  })
              .groupByKey(Grouped.with("article-views", json, json))
              .windowedBy(TimeWindows.ofSizeAndGrace(WINDOW, Duration.ofHours(23)))
              .count(Materialized.<JsonNode, Long, WindowStore<Bytes, byte[]>>as("view-counts").withKeySerde(json).withValueSerde(Serdes.Long()));

      Comparator<JsonNode> comparator = (o1, o2) -> (int) (o2.get("count").asLong() - o1.get("count").asLong());

      KTable<Windowed<String>, PriorityQueue<JsonNode>> allViewCounts =
          viewCounts
              .groupBy(
                  (windowedArticle, count) -> {
                    Windowed<String> windowedIndustry = new Windowed<>(windowedArticle.key().get("industry").asText(), windowedArticle.window());
                    ObjectNode viewStats = Env.JSON.createObjectNode();
                    viewStats.set("page", windowedArticle.key().get("page"));
                    viewStats.put("user", "user");
                    viewStats.set("industry", windowedArticle.key().get("industry"));
                    viewStats.put("count", count);
                    return new KeyValue<Windowed<String>, JsonNode>(windowedIndustry, viewStats);
                  },
                  Grouped.with("industry-views", windowedStringSerde, json))
              .aggregate(
                  () -> new PriorityQueue<>(comparator),
                  (windowedIndustry, record, queue) -> {
                    queue.add(record);
                    return queue;
                  },
                  (windowedIndustry, record, queue) -> {
                    queue.remove(record);
                    return queue;
                  },
                  Materialized.<Windowed<String>, PriorityQueue<JsonNode>, KeyValueStore<Bytes, byte[]>>as("all-view-counts")
                      .withKeySerde(windowedStringSerde)
                      .withValueSerde(queueSerde(comparator)));

      int topN = 100;
      allViewCounts
          .mapValues(
              queue -> {
                StringBuilder sb = new StringBuilder();
                for (int i = 0; i < topN; i++) {
                  JsonNode record = queue.poll();
                  if (record == null) {
                    break;
                  }
                  sb.append(record.get("page").asText());
                  sb.append("\n");
                }
                return sb.toString();
              })
          .toStream()
          .to(OUT + suffix, Produced.with(windowedStringSerde, Serdes.String()));
    }

    /** The output value is a plain string: the ranked pages, one per line. */
    public JsonNode decode(Env env, String topic, byte[] value) {
      return value == null ? null : Env.JSON.getNodeFactory().textNode(new String(value, java.nio.charset.StandardCharsets.UTF_8));
    }

    /**
     * The key through TimeWindowedDeserializer: base key and window, "eng@1700000000000/1700003600000".
     * Its end is start + the window size it was given, as for any reader of a windowed topic.
     */
    public String decodeKey(String topic, byte[] key) {
      if (key == null) {
        return null;
      }
      if (!(keys instanceof TimeWindowedDeserializer<?>)) {
        throw new IllegalStateException("WindowedSerdes gave " + keys.getClass() + ", want TimeWindowedDeserializer");
      }
      Windowed<String> w = keys.deserialize(topic, key);
      return w.key() + "@" + w.window().start() + "/" + w.window().end();
    }
  }

  static boolean isArticle(JsonNode record) {
    JsonNode flags = record.get("flags");
    return flags != null && !flags.isNull() && flags.asText().contains("ARTICLE");
  }

  /**
   * Confluent's PriorityQueueSerde with JSON: the queue in iteration order (its heap array);
   * reading offers each element in that order, which rebuilds the same array.
   */
  static Serde<PriorityQueue<JsonNode>> queueSerde(Comparator<JsonNode> comparator) {
    return Serdes.serdeFrom(
        (Serializer<PriorityQueue<JsonNode>>)
            (topic, queue) -> {
              if (queue == null) {
                return null;
              }
              ObjectNode o = Env.JSON.createObjectNode();
              ArrayNode heap = o.putArray("heap");
              queue.forEach(heap::add);
              return JsonScenarios.write(o);
            },
        (Deserializer<PriorityQueue<JsonNode>>)
            (topic, bytes) -> {
              if (bytes == null) {
                return null;
              }
              PriorityQueue<JsonNode> queue = new PriorityQueue<>(comparator);
              JsonScenarios.read(bytes).path("heap").forEach(queue::add);
              return queue;
            });
  }
}
