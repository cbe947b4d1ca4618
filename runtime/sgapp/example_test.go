package sgapp_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgreplay"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// What a generated main package does: fill an App and hand the command line
// to Main. Here the `replay` command runs the topology in process on JSON
// lines, as `./app replay < input.jsonl` would.
func ExampleMainIO() {
	app := &sgapp.App{
		ID: "shout-app",
		Build: func(b *sgstream.Builder) {
			words := sgstream.Source(b, "words", sgstream.SourceConfig[string, string]{
				Topic: "words", Key: serdes.String, Value: serdes.String,
			})
			shouted := sgstream.MapValues(words, "shout", func(key, value string) string {
				return strings.ToUpper(value) + "!"
			})
			sgstream.To(shouted, "to-shouted", "shouted", sgstream.SinkConfig[string, string]{
				Key: serdes.String, Value: serdes.String,
			})
		},
		Topics: []sgreplay.TopicCodec{
			sgreplay.Topic("words", serdes.String, serdes.String),
			sgreplay.Topic("shouted", serdes.String, serdes.String),
		},
	}
	in := strings.NewReader(`{"topic": "words", "key": "k1", "value": "hello", "timestamp": 1000}` + "\n")
	code := sgapp.MainIO(app, []string{"replay"}, in, os.Stdout, os.Stderr)
	fmt.Println("exit code", code)
	// Output:
	// {"topic":"shouted","key":"k1","value":"HELLO!","timestamp":1000}
	// exit code 0
}
