package io.streamgen.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Serde for record values. The wire format only has to round-trip inside the Java harness
 * (TopologyTestDriver re-serializes through internal topics); records are compared as JSON
 * objects keyed by the spec's field names, so JSON bytes are the simplest faithful choice.
 */
final class JsonSerde implements Serde<JsonNode> {
    static final ObjectMapper MAPPER = new ObjectMapper();

    @Override
    public Serializer<JsonNode> serializer() {
        return (topic, node) -> {
            if (node == null) {
                return null;
            }
            try {
                return MAPPER.writeValueAsBytes(node);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
    }

    @Override
    public Deserializer<JsonNode> deserializer() {
        return (topic, bytes) -> {
            if (bytes == null) {
                return null;
            }
            try {
                return MAPPER.readTree(bytes);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
    }
}
