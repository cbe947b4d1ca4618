// Command fromjava is the Kafka Streams program of
// docs/coming-from-kafka-streams.md compiled from a spec.
package main

//go:generate go tool streamgen generate

import "log/slog"

// LogOrder is the peek: it logs every processed order (at debug level, so
// replay output stays clean).
func LogOrder(key string, value string) {
	slog.Debug("processed order", "user", key, "order", value)
}
