package sgreplay

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// MaxLineBytes is the longest input line EachLine reads: a record line
// holds a whole key and value as JSON, so the default 64 KiB of a
// bufio.Scanner is too little.
const MaxLineBytes = 16 << 20

// EachLine calls fn with every non-blank line of in, trimmed, and its line
// number (from 1), in order: how replay, produce and run --input read the
// line format. It stops at fn's first error and returns it unchanged; a
// failure to read in is returned as "reading input: ...".
func EachLine(in io.Reader, fn func(lineNo int, text []byte) error) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), MaxLineBytes)
	for lineNo := 1; sc.Scan(); lineNo++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if err := fn(lineNo, text); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading input: %w", err)
	}
	return nil
}
