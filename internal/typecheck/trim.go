package typecheck

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The cache keeps what it has used lately and forgets the rest, as the go
// command's build cache does: a hit refreshes an entry's modification time
// (at most once an hour, so reads stay cheap), and at most once a day a
// check removes the entries nobody used for trimAge. Without this, every
// edit of a user's package would leave an entry behind for ever.
const (
	trimAge      = 5 * 24 * time.Hour
	trimInterval = 24 * time.Hour
	touchAfter   = time.Hour
)

// trimStamp is the file, at the top of the cache, holding the Unix time of
// the last trim.
const trimStamp = "trim.txt"

// touch marks the entry at path as used now.
func touch(path string, now time.Time) {
	if fi, err := os.Stat(path); err == nil && now.Sub(fi.ModTime()) > touchAfter {
		os.Chtimes(path, now, now)
	}
}

// trim removes entries unused for trimAge, unless the cache was trimmed
// within trimInterval. Failures are ignored: a cache that cannot be
// trimmed only takes room.
func (c *cache) trim(now time.Time) {
	if c.dir == "" {
		return
	}
	stamp := filepath.Join(c.dir, trimStamp)
	if b, err := os.ReadFile(stamp); err == nil {
		if last, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && now.Sub(time.Unix(last, 0)) < trimInterval {
			return
		}
	}
	for _, kind := range []string{"results", "exports"} {
		entries, err := os.ReadDir(filepath.Join(c.dir, kind))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > trimAge {
				os.Remove(filepath.Join(c.dir, kind, e.Name()))
			}
		}
	}
	if os.MkdirAll(c.dir, 0o755) == nil {
		os.WriteFile(stamp, []byte(strconv.FormatInt(now.Unix(), 10)+"\n"), 0o644)
	}
}
