package sgrun

import (
	"encoding/json"
	"fmt"

	"github.com/streamgen/streamgen/runtime/sgreplay"
)

// rawCodecs are the codecs of produce --raw and consume --raw: a key or
// value is the JSON string of its bytes in standard base64 (padded, as
// encoding/json writes []byte and as the json format writes bytes fields),
// null for a null key or a tombstone. They know every topic, declared or
// not (internal topics, a topic another service writes), and use no serde.
type rawCodecs struct{}

func (rawCodecs) Codec(topic string) sgreplay.TopicCodec { return rawCodec(topic) }
func (rawCodecs) TopicNames() []string                   { return nil }

type rawCodec string

func (c rawCodec) Name() string { return string(c) }

func (rawCodec) EncodeJSON(key, value json.RawMessage) (k, v []byte, err error) {
	if k, err = rawBytes(key); err != nil {
		return nil, nil, fmt.Errorf("key: %w", err)
	}
	if v, err = rawBytes(value); err != nil {
		return nil, nil, fmt.Errorf("value: %w", err)
	}
	return k, v, nil
}

func (rawCodec) DecodeJSON(k, v []byte) (key, value json.RawMessage, err error) {
	if key, err = rawJSON(k); err != nil {
		return nil, nil, err
	}
	value, err = rawJSON(v)
	return key, value, err
}

// rawBytes reads a base64 JSON string; null is nil, "" is empty but not nil.
func rawBytes(m json.RawMessage) ([]byte, error) {
	if len(m) == 0 || string(m) == "null" {
		return nil, nil
	}
	var b []byte
	if err := json.Unmarshal(m, &b); err != nil {
		return nil, fmt.Errorf("want a base64 string or null (--raw): %v", err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

func rawJSON(b []byte) (json.RawMessage, error) {
	if b == nil {
		return json.RawMessage("null"), nil
	}
	return json.Marshal(b)
}
