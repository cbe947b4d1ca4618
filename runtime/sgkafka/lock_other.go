//go:build !unix

package sgkafka

// lockDir is a no-op where flock is unavailable.
func lockDir(dir string) (func(), error) { return func() {}, nil }
