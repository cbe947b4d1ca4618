// Package replay reads and writes the replay format shared by the conformance suite, the
// Kafka Streams harness and a generated binary's replay command.
//
// A file is JSON lines. A line {"sequence": n} starts sequence n; every other line is a
// record {"topic": t, "key": k, "value": v, "timestamp": ms} with optional "headers" (an
// object of string values) and "partition". Keys and values are plain JSON for primitives,
// objects keyed by the spec's field names for records, and null for a tombstone. A windowed
// key is {"key": k, "start": ms, "end": ms}.
//
// It is deliberately a second reading of the format, not runtime/sgreplay: the suite judges
// what a generated binary prints, and an oracle that shared the runtime's parser would agree
// with that parser's bugs. It reads lines as plain JSON, with no codecs, and must not import
// the runtime. runtime/sgreplay.Line is the one definition the runtime uses (the replay
// command and run --input/--print).
package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// Record is one input or output record.
type Record struct {
	Topic     string            `json:"topic"`
	Key       json.RawMessage   `json:"key"`
	Value     json.RawMessage   `json:"value"`
	Timestamp int64             `json:"timestamp"`
	Headers   map[string]string `json:"headers,omitempty"`
	Partition *int              `json:"partition,omitempty"`
}

// Sequence is an independent run: each starts from empty state.
type Sequence struct {
	N       int
	Records []Record
}

type marker struct {
	Sequence *int `json:"sequence"`
}

// Read parses a whole delimited file.
func Read(r io.Reader) ([]Sequence, error) {
	var seqs []Sequence
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var m marker
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if m.Sequence != nil {
			seqs = append(seqs, Sequence{N: *m.Sequence})
			continue
		}
		if len(seqs) == 0 {
			return nil, fmt.Errorf("line %d: record before the first {\"sequence\": n} line", line)
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if rec.Topic == "" {
			return nil, fmt.Errorf("line %d: record without a topic", line)
		}
		s := &seqs[len(seqs)-1]
		s.Records = append(s.Records, rec)
	}
	return seqs, sc.Err()
}

// Write writes sequences in the delimited format.
func Write(w io.Writer, seqs []Sequence) error {
	bw := bufio.NewWriter(w)
	for _, s := range seqs {
		fmt.Fprintf(bw, "{\"sequence\":%d}\n", s.N)
		for _, r := range s.Records {
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			bw.Write(b)
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

// Canonical renders a record with its JSON normalized (object keys sorted, null for a
// missing key or value, headers sorted, partition dropped: the reference driver has one
// partition), so two records are equal iff their canonical forms are.
func Canonical(r Record) string {
	var b bytes.Buffer
	b.WriteString(`{"topic":`)
	t, _ := json.Marshal(r.Topic)
	b.Write(t)
	b.WriteString(`,"key":`)
	b.WriteString(CanonicalJSON(r.Key))
	b.WriteString(`,"value":`)
	b.WriteString(CanonicalJSON(r.Value))
	fmt.Fprintf(&b, `,"timestamp":%d`, r.Timestamp)
	if len(r.Headers) > 0 {
		keys := make([]string, 0, len(r.Headers))
		for k := range r.Headers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(`,"headers":{`)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			vb, _ := json.Marshal(r.Headers[k])
			b.Write(kb)
			b.WriteByte(':')
			b.Write(vb)
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.String()
}

// CanonicalJSON normalizes one JSON value; invalid JSON is returned verbatim so that it
// shows up in a difference instead of being hidden.
func CanonicalJSON(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "null"
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return string(raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(out)
}
