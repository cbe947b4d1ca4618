package typecheck

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"hash"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// cacheVersion changes whenever what the cache stores changes meaning.
const cacheVersion = "streamgen typecheck cache 1"

// cache remembers, under a hash of their inputs, the diagnostics of a
// check and where the export data of a set of imports is. A key covers
// everything the answer depends on, so an entry is never stale; an entry
// that cannot be read is a miss. A cache that cannot be written only costs
// time.
type cache struct {
	dir string // empty: no caching
}

func openCache(opt Options) *cache {
	if opt.NoCache {
		return &cache{}
	}
	dir := opt.CacheDir
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return &cache{}
		}
		dir = filepath.Join(base, "streamgen")
	}
	return &cache{dir: filepath.Join(dir, "typecheck")}
}

// resultKey is the key of the check's answer: the dependencies' key and
// every file of the package as it will be, and the streamgen executable
// that checks. It is empty when the inputs cannot be keyed.
func (c *cache) resultKey(in *inputs) string {
	deps := c.depsKey(in)
	if deps == "" {
		return ""
	}
	h := sha256.New()
	field(h, "result", deps, executableID())
	for _, f := range in.files {
		field(h, f.path, string(f.src))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// depsKey hashes what the types of the package's imports depend on: the
// toolchain and build environment, go.mod and go.sum (which pin every
// module the build downloads), and the source of every imported package
// that lives on this machine instead (the main module's own packages and
// directory replacements), followed transitively. It is empty when the
// build is one the key does not model (no module, a go.work workspace).
func (c *cache) depsKey(in *inputs) string {
	if c.dir == "" || in.mod == nil || in.mod.workspace {
		return ""
	}
	if in.depsKey != "" {
		return in.depsKey
	}
	h := sha256.New()
	field(h, cacheVersion, toolchainID(), strings.Join(in.buildFlags, "\x00"))
	field(h, "go.mod", string(in.mod.gomod), "go.sum", string(in.mod.gosum))
	if vendor, err := os.ReadFile(filepath.Join(in.mod.root, "vendor", "modules.txt")); err == nil {
		field(h, "vendor", string(vendor))
	}
	var roots []string
	for _, f := range in.files {
		roots = append(roots, fileImports(f.src)...)
	}
	if !hashLocal(h, in.mod, roots) {
		return ""
	}
	in.depsKey = hex.EncodeToString(h.Sum(nil))
	return in.depsKey
}

// hashLocal hashes the Go files of every local package reachable from the
// import paths, in a deterministic order.
func hashLocal(h hash.Hash, m *module, roots []string) bool {
	seen := map[string]bool{}
	queue := append([]string(nil), roots...)
	var dirs []string
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		dir, ok := m.localDir(path)
		if !ok {
			continue
		}
		dirs = append(dirs, dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // not a package here; go list decides what it is
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return false
			}
			field(h, filepath.Join(dir, name), string(src))
			queue = append(queue, fileImports(src)...)
		}
	}
	sort.Strings(dirs)
	field(h, dirs...)
	return true
}

// fileImports returns the import paths of a Go file, none if it does not
// parse (the check itself then reports or decides).
func fileImports(src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range f.Imports {
		if p, err := strconv.Unquote(s.Path.Value); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// toolchainID identifies the go command the check runs and the build
// environment it reads.
func toolchainID() string {
	parts := []string{runtime.Version()}
	if goCmd, err := exec.LookPath("go"); err == nil {
		parts = append(parts, goCmd, fileStamp(goCmd))
	}
	for _, v := range []string{"GOROOT", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "GOFLAGS", "GOEXPERIMENT", "GOTOOLCHAIN", "CGO_ENABLED", "GOCACHE", "GOMODCACHE", "GOPATH"} {
		parts = append(parts, v+"="+os.Getenv(v))
	}
	return strings.Join(parts, "\x00")
}

// executableID identifies the running streamgen, so a rebuilt generator
// (whose check may differ) misses the cache.
func executableID() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	return exe + "\x00" + fileStamp(exe)
}

func fileStamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "missing"
	}
	return fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
}

// field writes length-prefixed strings, so that no two inputs hash alike.
func field(h hash.Hash, parts ...string) {
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write([]byte(p))
	}
}

// result returns the cached diagnostics for key.
func (c *cache) result(key string) (diagList, bool) {
	var d diagList
	return d, c.get("results", key, &d)
}

func (c *cache) putResult(key string, d diagList) {
	if d == nil {
		d = diagList{}
	}
	c.put("results", key, d)
}

// exports returns where the export data of the imports and their
// dependencies is: remembered under the dependencies' key while every file
// is still in the build cache, else asked of the go command.
func (c *cache) exports(in *inputs, imports []string) (map[string]string, error) {
	key := ""
	if deps := c.depsKey(in); deps != "" {
		h := sha256.New()
		field(h, "exports", deps)
		field(h, imports...)
		key = hex.EncodeToString(h.Sum(nil))
	}
	var exports map[string]string
	if c.get("exports", key, &exports) && allExist(exports) {
		return exports, nil
	}
	exports, err := listExports(in, imports)
	if err != nil {
		return nil, err
	}
	c.put("exports", key, exports)
	return exports, nil
}

func allExist(files map[string]string) bool {
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			return false
		}
	}
	return len(files) > 0
}

func (c *cache) get(kind, key string, v any) bool {
	if c.dir == "" || key == "" {
		return false
	}
	path := filepath.Join(c.dir, kind, key)
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, v) != nil {
		return false
	}
	touch(path, time.Now())
	return true
}

// put writes an entry through a temporary file and a rename, so that a
// concurrent reader sees the whole entry or none.
func (c *cache) put(kind, key string, v any) {
	if c.dir == "" || key == "" {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	dir := filepath.Join(c.dir, kind)
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, key+".*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), filepath.Join(dir, key)) != nil {
		os.Remove(tmp.Name())
	}
	c.trim(time.Now())
}
