package sgreplay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Line is one line of the replay format.
type Line struct {
	Topic     string          `json:"topic"`
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
	Timestamp *int64          `json:"timestamp"`
	Partition *int32          `json:"partition,omitempty"`
	// Offset is where the consume command read the record. Parse accepts
	// and ignores it (the broker assigns offsets), so a consumed file feeds
	// produce and replay unchanged.
	Offset  *int64            `json:"offset,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Sequence starts a new, independent sequence; such a line carries
	// nothing else.
	Sequence *int `json:"sequence,omitempty"`
	// AdvanceWallClock moves the wall clock of the replay forward by this
	// many ms, as TopologyTestDriver.advanceWallClockTime; such a line
	// carries nothing else.
	AdvanceWallClock *int64 `json:"advance_wall_clock,omitempty"`
}

// Marker is a line that carries no record: the start of a sequence or an
// advance of the wall clock. Exactly one field is set.
type Marker struct {
	Sequence         *int
	AdvanceWallClock *int64 // ms, not negative
}

// String names the kind of marker, for errors about where it cannot go.
func (m *Marker) String() string {
	if m.Sequence != nil {
		return "a sequence marker"
	}
	return "a wall-clock advance"
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

// Record is a parsed input line in Kafka form.
type Record struct {
	Topic     string
	Partition int32 // -1 when the line names none
	Key       []byte
	Value     []byte
	Timestamp int64
	Headers   []Header // sorted by key
}

// Codecs finds the codec of a declared topic (nil if not declared) and
// lists the declared topics for error messages.
type Codecs interface {
	Codec(topic string) TopicCodec
	TopicNames() []string
}

// Parse decodes one input line into a record, or into a marker (m
// non-nil). Errors say what is wrong without the line number, which the
// caller adds.
func Parse(text []byte, codecs Codecs) (rec Record, m *Marker, err error) {
	var l Line
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return Record{}, nil, fmt.Errorf("not a replay record: %v", err)
	}
	if dec.More() {
		return Record{}, nil, fmt.Errorf("not a replay record: more than one JSON value on the line")
	}
	if l.Sequence != nil || l.AdvanceWallClock != nil {
		m, err := marker(&l)
		return Record{}, m, err
	}
	if l.Topic == "" {
		return Record{}, nil, fmt.Errorf(`missing "topic"`)
	}
	if l.Timestamp == nil {
		return Record{}, nil, fmt.Errorf(`missing "timestamp"`)
	}
	c := codecs.Codec(l.Topic)
	if c == nil {
		return Record{}, nil, fmt.Errorf("topic %q is not declared in the spec (declared: %s)", l.Topic, strings.Join(codecs.TopicNames(), ", "))
	}
	k, v, err := c.EncodeJSON(l.Key, l.Value)
	if err != nil {
		return Record{}, nil, fmt.Errorf("topic %q: %v", l.Topic, err)
	}
	rec = Record{Topic: l.Topic, Partition: -1, Key: k, Value: v, Timestamp: *l.Timestamp}
	if l.Partition != nil {
		if *l.Partition < 0 {
			return Record{}, nil, fmt.Errorf("partition %d is negative", *l.Partition)
		}
		rec.Partition = *l.Partition
	}
	names := make([]string, 0, len(l.Headers))
	for name := range l.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		rec.Headers = append(rec.Headers, Header{Key: name, Value: []byte(l.Headers[name])})
	}
	return rec, nil, nil
}

// marker checks a line that has a marker field.
func marker(l *Line) (*Marker, error) {
	m := &Marker{Sequence: l.Sequence, AdvanceWallClock: l.AdvanceWallClock}
	switch {
	case l.Sequence != nil && l.AdvanceWallClock != nil:
		return nil, fmt.Errorf(`a line is either {"sequence": n} or {"advance_wall_clock": ms}, not both`)
	case l.Topic != "" || l.Key != nil || l.Value != nil || l.Timestamp != nil || l.Partition != nil || l.Headers != nil:
		return nil, fmt.Errorf("%s carries no record fields", m)
	case l.AdvanceWallClock != nil && *l.AdvanceWallClock < 0:
		return nil, fmt.Errorf("advance_wall_clock %d is negative: the wall clock only moves forward", *l.AdvanceWallClock)
	}
	return m, nil
}

// Format renders an output record as a line (without the newline).
func Format(c TopicCodec, topic string, partition *int32, key, value []byte, timestamp int64, headers []Header) ([]byte, error) {
	k, v, err := c.DecodeJSON(key, value)
	if err != nil {
		return nil, fmt.Errorf("decoding output on %q: %w", topic, err)
	}
	l := Line{Topic: topic, Key: k, Value: v, Timestamp: &timestamp, Partition: partition}
	if len(headers) > 0 {
		l.Headers = map[string]string{}
		for _, h := range headers {
			l.Headers[h.Key] = string(h.Value)
		}
	}
	return MarshalJSON(l)
}

// MarshalJSON encodes v as JSON without HTML escaping, so an output line
// shows "a <- b" and "&" as written instead of \u003c and \u0026: replay
// and --print output is read by people and by diff, never embedded in HTML.
func MarshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
