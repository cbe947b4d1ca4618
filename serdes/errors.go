package serdes

import (
	"errors"
	"strconv"
	"strings"
)

// ErrDecode matches every decoding error of this package with errors.Is, so
// the runtime can route undecodable records to its deserialization-error
// policy without knowing the concrete error.
var ErrDecode = errors.New("streamgen: decode error")

// DecodeError describes where and why decoding failed.
//
// Errors are only built on failure: the success path of every reader and of
// generated decoders allocates nothing for error handling. The path is built
// while the error travels up through the generated decoders (each level
// prepends its field name or index), so it costs nothing until something
// fails.
type DecodeError struct {
	// Path is the field path of the value that failed, such as
	// "items[2].sku" or `tags["eu"]`; empty for the top-level value.
	Path string
	// Offset is the byte offset of the failing value in the input passed to
	// the outermost decoding call (a generated UnmarshalMsg or a Serde's
	// Decode). It is -1 when the error came from a reader called directly
	// and was never passed through Locate.
	Offset int
	// Msg says what was wrong, such as "want string, got bool".
	Msg string

	// remaining is len(input) at the failing value. Every reader works on a
	// suffix of the same buffer, so the absolute offset is len(outer input)
	// minus remaining, computed once by Locate.
	remaining int
}

// Error formats the error as "streamgen: decode items[2].sku at offset 17:
// want string, got bool".
func (e *DecodeError) Error() string {
	var sb strings.Builder
	sb.WriteString("streamgen: decode")
	if e.Path != "" {
		sb.WriteByte(' ')
		sb.WriteString(e.Path)
	}
	if e.Offset >= 0 {
		sb.WriteString(" at offset ")
		sb.WriteString(strconv.Itoa(e.Offset))
	}
	sb.WriteString(": ")
	sb.WriteString(e.Msg)
	return sb.String()
}

// Is makes errors.Is(err, ErrDecode) true for every *DecodeError.
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

// newErr builds a DecodeError for the value at the start of b.
func newErr(b []byte, msg string) error {
	return &DecodeError{Offset: -1, Msg: msg, remaining: len(b)}
}

// typeErr reports a value of the wrong msgpack type at the start of b.
func typeErr(b []byte, want string) error {
	if len(b) == 0 {
		return errShort(b)
	}
	return newErr(b, "want "+want+", got "+typeName(b[0]))
}

func errShort(b []byte) error { return newErr(b, "unexpected end of input") }

func errLength(b []byte) error {
	return newErr(b, "declared length exceeds the remaining input")
}

// WrapField prepends a record field name to the path of a decode error.
// Generated decoders call it on the way up; errors of other types are
// returned unchanged.
func WrapField(err error, name string) error {
	de, ok := err.(*DecodeError)
	if !ok {
		return err
	}
	switch {
	case de.Path == "":
		de.Path = name
	case de.Path[0] == '[':
		de.Path = name + de.Path
	default:
		de.Path = name + "." + de.Path
	}
	return err
}

// WrapIndex prepends a list index ("[2]") to the path of a decode error.
func WrapIndex(err error, i int) error {
	return wrapElem(err, "["+strconv.Itoa(i)+"]")
}

// WrapKey prepends a map key (`["eu"]`) to the path of a decode error.
func WrapKey(err error, key string) error {
	return wrapElem(err, "["+strconv.Quote(key)+"]")
}

func wrapElem(err error, elem string) error {
	de, ok := err.(*DecodeError)
	if !ok {
		return err
	}
	switch {
	case de.Path == "" || de.Path[0] == '[':
		de.Path = elem + de.Path
	default:
		de.Path = elem + "." + de.Path
	}
	return err
}

// Locate sets the Offset of a decode error relative to input, the buffer
// given to the outermost decoding call. Generated UnmarshalMsg methods and
// the Serde implementations call it; call it yourself only when using the
// readers directly.
func Locate(err error, input []byte) error {
	if de, ok := err.(*DecodeError); ok {
		de.Offset = len(input) - de.remaining
		if de.Offset < 0 {
			de.Offset = 0
		}
	}
	return err
}

// TooDeep is the error generated decoders return when records nest deeper
// than MaxDepth, which only hostile or corrupt input does for a recursive
// schema. Failing beats overflowing the goroutine stack.
func TooDeep(b []byte) error {
	return newErr(b, "records nested deeper than "+strconv.Itoa(MaxDepth))
}

// MaxDepth is how deeply generated decoders let records nest.
const MaxDepth = 256

// MaxPrealloc bounds the capacity generated decoders reserve for a list or
// map from its declared count. Counts are already limited by the input size,
// but one input byte per element could still ask for a slice of large
// records hundreds of times the input's size; beyond this bound the
// collection grows as elements actually decode.
const MaxPrealloc = 1024

// typeName names the msgpack type of a first byte for error messages.
func typeName(c byte) string {
	switch {
	case c <= 0x7f || c >= 0xe0:
		return "int"
	case c <= 0x8f:
		return "map"
	case c <= 0x9f:
		return "array"
	case c <= 0xbf:
		return "string"
	}
	switch c {
	case 0xc0:
		return "nil"
	case 0xc2, 0xc3:
		return "bool"
	case 0xc4, 0xc5, 0xc6:
		return "bin"
	case 0xc7, 0xc8, 0xc9, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		return "ext"
	case 0xca:
		return "float32"
	case 0xcb:
		return "float64"
	case 0xcc, 0xcd, 0xce, 0xcf:
		return "uint"
	case 0xd0, 0xd1, 0xd2, 0xd3:
		return "int"
	case 0xd9, 0xda, 0xdb:
		return "string"
	case 0xdc, 0xdd:
		return "array"
	case 0xde, 0xdf:
		return "map"
	}
	return "invalid byte 0x" + strconv.FormatUint(uint64(c), 16)
}
