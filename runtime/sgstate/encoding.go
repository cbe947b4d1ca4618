package sgstate

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// Internal key encodings. User keys are opaque bytes, so wherever a user key
// is followed by more fields it is escaped: 0x00 becomes 0x00 0xFF and the key
// ends with 0x00 0x01. The encoding preserves bytewise order and no escaped
// key is a prefix of another, so "key a" can never match entries of "key ab".

// appendEscaped appends the escaped, terminated form of k.
func appendEscaped(dst, k []byte) []byte {
	for _, b := range k {
		if b == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, b)
		}
	}
	return append(dst, 0, 1)
}

// readEscaped decodes an escaped key at the start of src, appending it to dst;
// it returns the decoded key and the rest of src.
func readEscaped(dst, src []byte) (key, rest []byte, err error) {
	for i := 0; i < len(src); i++ {
		b := src[i]
		if b != 0 {
			dst = append(dst, b)
			continue
		}
		if i+1 >= len(src) {
			break
		}
		switch src[i+1] {
		case 0xFF:
			dst = append(dst, 0)
			i++
		case 1:
			return dst, src[i+2:], nil
		default:
			return nil, nil, fmt.Errorf("streamgen: corrupt escaped key byte %#x", src[i+1])
		}
	}
	return nil, nil, fmt.Errorf("streamgen: corrupt escaped key: no terminator")
}

// appendTime appends t as 8 bytes that sort like the signed value.
func appendTime(dst []byte, t int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(t)^(1<<63))
}

func readTime(src []byte) int64 {
	return int64(binary.BigEndian.Uint64(src) ^ (1 << 63))
}

// keySuccessor is the smallest key greater than k: k + 0x00. It turns an
// inclusive upper bound into the exclusive bound iterators take.
func keySuccessor(k []byte) []byte {
	out := make([]byte, len(k)+1)
	copy(out, k)
	return out
}

// prefixEnd is the smallest key greater than every key starting with prefix,
// or nil when there is none (prefix is all 0xFF or empty).
func prefixEnd(prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xFF {
			out := make([]byte, i+1)
			copy(out, prefix)
			out[i]++
			return out
		}
	}
	return nil
}

// floorDiv divides rounding towards negative infinity (segment ids of
// negative timestamps).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// satSub and satAdd saturate instead of wrapping around.
func satSub(a, b int64) int64 {
	if b > 0 && a < math.MinInt64+b {
		return math.MinInt64
	}
	if b < 0 && a > math.MaxInt64+b {
		return math.MaxInt64
	}
	return a - b
}

func satAdd(a, b int64) int64 { return satSub(a, -b) }

// Kafka Streams' changelog key layouts (WindowKeySchema.toStoreKeyBinary and
// SessionKeySchema.toBinary): the raw key followed by fixed-size big-endian
// fields, so the key is recovered by length.

func windowChangelogKey(dst, key []byte, windowStart int64, seq uint32) []byte {
	dst = append(dst, key...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(windowStart))
	return binary.BigEndian.AppendUint32(dst, seq)
}

func parseWindowChangelogKey(k []byte) (key []byte, windowStart int64, seq uint32, err error) {
	if len(k) < 12 {
		return nil, 0, 0, fmt.Errorf("%w: window store key has %d bytes, want at least 12", ErrBadChangelogKey, len(k))
	}
	n := len(k) - 12
	return k[:n], int64(binary.BigEndian.Uint64(k[n:])), binary.BigEndian.Uint32(k[n+8:]), nil
}

func sessionChangelogKey(dst, key []byte, start, end int64) []byte {
	dst = append(dst, key...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(end))
	return binary.BigEndian.AppendUint64(dst, uint64(start))
}

func parseSessionChangelogKey(k []byte) (key []byte, start, end int64, err error) {
	if len(k) < 16 {
		return nil, 0, 0, fmt.Errorf("%w: session store key has %d bytes, want at least 16", ErrBadChangelogKey, len(k))
	}
	n := len(k) - 16
	return k[:n], int64(binary.BigEndian.Uint64(k[n+8:])), int64(binary.BigEndian.Uint64(k[n:])), nil
}

// encodeCheckpoint stores a checkpoint as JSON: small, written once per
// commit, and readable with any tool when debugging a state dir.
func encodeCheckpoint(cp map[string]int64) ([]byte, error) {
	return json.Marshal(cp)
}

func decodeCheckpoint(b []byte) (map[string]int64, error) {
	if b == nil {
		return nil, nil
	}
	cp := map[string]int64{}
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("streamgen: corrupt state store checkpoint: %w", err)
	}
	return cp, nil
}

func copyCheckpoint(cp map[string]int64) map[string]int64 {
	if cp == nil {
		return nil
	}
	out := make(map[string]int64, len(cp))
	for k, v := range cp {
		out[k] = v
	}
	return out
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
