package sgkafka

import (
	"errors"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/runtime/sgstream"
)

func TestNewRejectsDeadLetterWithoutTopic(t *testing.T) {
	tp, err := sgstream.NewTopology("demo", countBuild("in", "out"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(tp, Config{Brokers: []string{"127.0.0.1:1"}, InvalidTime: sgstream.TimestampDeadLetter})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "dead-letter topic") {
		t.Fatalf("New = %v, want ErrConfig about the dead-letter topic", err)
	}
}
