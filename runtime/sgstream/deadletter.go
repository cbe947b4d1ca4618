package sgstream

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// The headers of a dead-letter record, named and encoded as Kafka Streams
// 4.2+ writes them (KIP-1034, ExceptionHandlerUtils), so tools written for
// Kafka Streams' dead-letter queues read ours: every value is UTF-8 text,
// partition and offset in decimal. They follow the original record's
// headers, in this order.
const (
	HeaderErrorsException  = "__streams.errors.exception"
	HeaderErrorsMessage    = "__streams.errors.message"
	HeaderErrorsStacktrace = "__streams.errors.stacktrace"
	HeaderErrorsTopic      = "__streams.errors.topic"
	HeaderErrorsPartition  = "__streams.errors.partition"
	HeaderErrorsOffset     = "__streams.errors.offset"
)

// The values of the __streams.errors.exception header. Kafka Streams writes
// the class name of the exception its handler caught; where Kafka has a
// class for the same failure we write that name, so a tool that tells
// undecodable records (never worth retrying) from the rest by
// SerializationException, as it does for Kafka's own and Confluent's
// deserializers, treats ours alike. A Go error from the application's own
// code has no Java class; a streamgen name says what it was.
const (
	// ExceptionSerialization: the key or value bytes did not decode
	// (ErrDeserialization), as Kafka's deserializers throw it.
	ExceptionSerialization = "org.apache.kafka.common.errors.SerializationException"
	// ExceptionStreams: a negative timestamp under the dead_letter timestamp
	// policy (ErrInvalidTimestamp); Kafka's FailOnInvalidTimestamp throws a
	// StreamsException for it.
	ExceptionStreams = "org.apache.kafka.streams.errors.StreamsException"
	// ExceptionPanic: a user function panicked; the stack trace header
	// holds the panicking goroutine's frames.
	ExceptionPanic = "streamgen.Panic"
	// ExceptionProcessing: any other error while processing the record.
	ExceptionProcessing = "streamgen.ProcessingError"
)

// legacyHeaders are the dead-letter headers streamgen wrote before it wrote
// Kafka's: kept, after Kafka's, for one release so consumers that read them
// keep working while they move to the __streams.errors.* names.
const (
	legacyHeaderTopic     = "streamgen.error.topic"
	legacyHeaderPartition = "streamgen.error.partition"
	legacyHeaderOffset    = "streamgen.error.offset"
	legacyHeaderMessage   = "streamgen.error.message"
)

// deadLetterHeaders returns the headers of the dead letter of raw failing
// with err: raw's own headers first, as Kafka copies them, then Kafka's
// error headers, then the legacy ones.
func deadLetterHeaders(raw *RawRecord, err error) []Header {
	msg := firstLine(err.Error())
	exception := exceptionName(err)
	partition := []byte(strconv.Itoa(int(raw.Partition)))
	offset := []byte(strconv.FormatInt(raw.Offset, 10))
	return append(append(make([]Header, 0, len(raw.Headers)+10), raw.Headers...),
		Header{Key: HeaderErrorsException, Value: []byte(exception)},
		Header{Key: HeaderErrorsMessage, Value: []byte(msg)},
		Header{Key: HeaderErrorsStacktrace, Value: []byte(stackTrace(exception, msg, err))},
		Header{Key: HeaderErrorsTopic, Value: []byte(raw.Topic)},
		Header{Key: HeaderErrorsPartition, Value: partition},
		Header{Key: HeaderErrorsOffset, Value: offset},
		Header{Key: legacyHeaderTopic, Value: []byte(raw.Topic)},
		Header{Key: legacyHeaderPartition, Value: partition},
		Header{Key: legacyHeaderOffset, Value: offset},
		Header{Key: legacyHeaderMessage, Value: []byte(msg)},
	)
}

// exceptionName is the __streams.errors.exception value for err.
func exceptionName(err error) string {
	var p *panicError
	switch {
	case errors.Is(err, ErrDeserialization):
		return ExceptionSerialization
	case errors.Is(err, ErrInvalidTimestamp):
		return ExceptionStreams
	case errors.As(err, &p):
		return ExceptionPanic
	}
	return ExceptionProcessing
}

// stackTrace renders err as Java's printStackTrace does, "name: message"
// then one line per frame, so tools that show or parse Kafka Streams'
// stack traces show ours. A Go error carries no stack: for a panic the
// frames are the panicking goroutine's, from the panicking function down,
// with file base names only, as Java prints them (no machine paths); for
// any other error the lines are its chain of causes ("Caused by: ...").
func stackTrace(exception, msg string, err error) string {
	var b strings.Builder
	b.WriteString(exception)
	if msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	}
	b.WriteByte('\n')
	var p *panicError
	if errors.As(err, &p) {
		p.writeFrames(&b)
		return b.String()
	}
	writeCauses(&b, err)
	return b.String()
}

// writeCauses writes one "Caused by:" line for each error err wraps, depth
// first, leaving out streamgen's sentinel errors: they are the exception
// name already.
func writeCauses(b *strings.Builder, err error) {
	var next []error
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		next = []error{u.Unwrap()}
	case interface{ Unwrap() []error }:
		next = u.Unwrap()
	}
	for _, c := range next {
		if c == nil || c == ErrProcessing || c == ErrDeserialization || c == ErrInvalidTimestamp || c == ErrSuppressBufferFull {
			continue
		}
		b.WriteString("Caused by: ")
		b.WriteString(firstLine(c.Error()))
		b.WriteByte('\n')
		writeCauses(b, c)
	}
}

// panicError is a panic in user code recovered by the task's guard: it
// keeps the panicking goroutine's program counters for the dead letter's
// stack trace. Its message, with debug.Stack's full text, is unchanged from
// what the fail and continue policies always reported.
type panicError struct {
	value any
	stack []byte
	pcs   []uintptr
}

// maxPanicFrames bounds the frames a dead letter's stack trace keeps: a
// header, not a core dump.
const maxPanicFrames = 64

// newPanicError captures the stack of the goroutine panicking with v; it
// must be called from the deferred function that recovered v.
func newPanicError(v any) *panicError {
	pcs := make([]uintptr, maxPanicFrames)
	n := runtime.Callers(2, pcs)
	return &panicError{value: v, stack: debug.Stack(), pcs: pcs[:n]}
}

func (e *panicError) Error() string {
	return fmt.Sprintf("%v: panic: %v\n%s", ErrProcessing, e.value, e.stack)
}

func (e *panicError) Unwrap() error { return ErrProcessing }

// writeFrames writes the frames from the panicking function down, as Java
// prints them ("\tat function(file.go:line)"): the recovering defer and the
// runtime's panic machinery above the panicking function are left out
// (all frames are kept should the runtime's panic frame not be found).
func (e *panicError) writeFrames(b *strings.Builder) {
	var all []runtime.Frame
	frames := runtime.CallersFrames(e.pcs)
	for more := true; more; {
		var f runtime.Frame
		f, more = frames.Next()
		all = append(all, f)
	}
	user := all
	for i, f := range all {
		if f.Function == "runtime.gopanic" {
			user = all[i+1:]
			break
		}
	}
	for len(user) > 1 && strings.HasPrefix(user[0].Function, "runtime.") {
		user = user[1:] // runtime.panicmem, runtime.sigpanic, ...
	}
	for _, f := range user {
		fmt.Fprintf(b, "\tat %s(%s:%d)\n", f.Function, filepath.Base(f.File), f.Line)
	}
}
