// Package webdriver drives a real headless Chromium from Go tests through
// chromedriver's W3C WebDriver HTTP API, with net/http only: a session,
// navigation, elements found by CSS selector, typing, clicks, scripts and
// screenshots. It is for tests of the live page (internal/e2e); it holds
// no browser of its own: chromium and chromedriver are the Debian packages
// scripts/chromium.sh installs. Without them a test skips, and fails when
// CI=true, as a missing broker does.
package webdriver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// elementKey is the W3C name of an element reference in JSON.
const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// Flags every Chromium here starts with: headless, and none of the
// background traffic (component updates, sync, QUIC probes) that hangs
// or fails on a closed network.
var chromiumArgs = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
	"--window-size=1400,1800"}

// Paths of the browser and its driver: STREAMGEN_CHROMIUM and
// STREAMGEN_CHROMEDRIVER, else where the Debian packages put them.
func paths() (chromium, driver string) {
	chromium, driver = os.Getenv("STREAMGEN_CHROMIUM"), os.Getenv("STREAMGEN_CHROMEDRIVER")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if driver == "" {
		driver = "/usr/bin/chromedriver"
	}
	return chromium, driver
}

// Browser is one WebDriver session in a fresh Chromium profile.
type Browser struct {
	t       testing.TB
	base    string // http://127.0.0.1:<port>/session/<id>
	client  *http.Client
	timeout time.Duration
}

// Start starts chromedriver and a session; both end with the test. It
// skips the test when Chromium is not installed, or fails it when CI=true.
func Start(t testing.TB) *Browser {
	t.Helper()
	chromium, driver := paths()
	for _, p := range []string{chromium, driver} {
		if _, err := os.Stat(p); err != nil {
			msg := fmt.Sprintf("webdriver: %s not found (install with scripts/chromium.sh): %v", p, err)
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(driver, "--port="+strconv.Itoa(port), "--allowed-ips=127.0.0.1")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("webdriver: starting %s: %v", driver, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	root := "http://127.0.0.1:" + strconv.Itoa(port)
	b := &Browser{t: t, client: &http.Client{Timeout: 2 * time.Minute}, timeout: 30 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st struct {
			Ready bool `json:"ready"`
		}
		if err := b.call(http.MethodGet, root+"/status", nil, &st); err == nil && st.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("webdriver: chromedriver not ready after 30s: %s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome", "acceptInsecureCerts": true,
		"goog:chromeOptions": map[string]any{"binary": chromium, "args": append(append([]string(nil), chromiumArgs...), "--user-data-dir="+t.TempDir())},
	}}}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(http.MethodPost, root+"/session", caps, &sess); err != nil {
		t.Fatalf("webdriver: new session: %v\nchromedriver: %s", err, logs.String())
	}
	b.base = root + "/session/" + sess.SessionID
	t.Cleanup(func() { b.call(http.MethodDelete, b.base, nil, nil) })
	return b
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// call sends one WebDriver command and decodes its "value" into out.
func (b *Browser) call(method, url string, in, out any) error {
	var body io.Reader
	if in != nil {
		j, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(j)
	} else if method == http.MethodPost {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, url, res.StatusCode, raw)
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		json.Unmarshal(env.Value, &e)
		return &Error{Code: e.Error, Message: e.Message}
	}
	if out != nil {
		return json.Unmarshal(env.Value, out)
	}
	return nil
}

// Error is an error WebDriver answered with ("no such element", ...).
type Error struct{ Code, Message string }

func (e *Error) Error() string { return "webdriver: " + e.Code + ": " + firstLine(e.Message) }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// must fails the test on err.
func (b *Browser) must(err error, what string) {
	if err != nil {
		b.t.Helper()
		b.t.Fatalf("webdriver: %s: %v", what, err)
	}
}

// Navigate opens url and waits for the document to load.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	b.must(b.call(http.MethodPost, b.base+"/url", map[string]string{"url": url}, nil), "navigate to "+url)
}

// Element is an element of the page.
type Element struct {
	b  *Browser
	id string
}

// FindAll returns the elements matching a CSS selector now.
func (b *Browser) FindAll(css string) []Element {
	b.t.Helper()
	var refs []map[string]string
	b.must(b.call(http.MethodPost, b.base+"/elements", map[string]string{"using": "css selector", "value": css}, &refs), "find "+css)
	out := make([]Element, len(refs))
	for i, r := range refs {
		out[i] = Element{b: b, id: r[elementKey]}
	}
	return out
}

// Find returns the one element matching css, failing the test without.
func (b *Browser) Find(css string) Element {
	b.t.Helper()
	all := b.FindAll(css)
	if len(all) == 0 {
		b.t.Fatalf("webdriver: no element matches %q", css)
	}
	return all[0]
}

func (e Element) url(cmd string) string { return e.b.base + "/element/" + e.id + cmd }

// Text is the element's rendered text.
func (e Element) Text() string {
	e.b.t.Helper()
	var s string
	e.b.must(e.b.call(http.MethodGet, e.url("/text"), nil, &s), "text")
	return s
}

// Attr is one of the element's attributes ("" when unset).
func (e Element) Attr(name string) string {
	e.b.t.Helper()
	var s *string
	e.b.must(e.b.call(http.MethodGet, e.url("/attribute/"+name), nil, &s), "attribute "+name)
	if s == nil {
		return ""
	}
	return *s
}

// Clear empties an input.
func (e Element) Clear() {
	e.b.t.Helper()
	e.b.must(e.b.call(http.MethodPost, e.url("/clear"), nil, nil), "clear")
}

// Type types text into the element, as a user at the keyboard would.
func (e Element) Type(text string) {
	e.b.t.Helper()
	e.b.must(e.b.call(http.MethodPost, e.url("/value"), map[string]string{"text": text}, nil), "type")
}

// Click clicks the element.
func (e Element) Click() {
	e.b.t.Helper()
	e.b.must(e.b.call(http.MethodPost, e.url("/click"), nil, nil), "click")
}

// Select picks the option of a <select> whose value is value.
func (e Element) Select(value string) {
	e.b.t.Helper()
	var opts []map[string]string
	e.b.must(e.b.call(http.MethodPost, e.url("/elements"), map[string]string{"using": "css selector", "value": "option[value=\"" + value + "\"]"}, &opts), "find option "+value)
	if len(opts) == 0 {
		e.b.t.Fatalf("webdriver: no option %q", value)
	}
	Element{b: e.b, id: opts[0][elementKey]}.Click()
}

// Execute runs a script in the page (its body, with arguments as
// arguments[i]) and decodes what it returns into out (nil: ignored).
// A script returning a promise is awaited.
func (b *Browser) Execute(out any, script string, args ...any) {
	b.t.Helper()
	if args == nil {
		args = []any{}
	}
	b.must(b.call(http.MethodPost, b.base+"/execute/sync", map[string]any{"script": script, "args": args}, out), "execute script")
}

// Screenshot is a PNG of the whole page, as tall as its content.
func (b *Browser) Screenshot() []byte {
	b.t.Helper()
	var dims struct{ W, H int }
	b.Execute(&dims, "return {W: document.documentElement.scrollWidth, H: document.documentElement.scrollHeight};")
	b.must(b.call(http.MethodPost, b.base+"/window/rect", map[string]int{"width": max(dims.W, 1000), "height": dims.H + 120}, nil), "resize")
	var s string
	b.must(b.call(http.MethodGet, b.base+"/screenshot", nil, &s), "screenshot")
	png, err := base64.StdEncoding.DecodeString(s)
	b.must(err, "decode screenshot")
	return png
}

// ErrTimeout is what Wait reports when the condition never held.
var ErrTimeout = errors.New("condition not met")

// Wait polls cond every 100 ms until it holds, failing the test after
// timeout with what.
func (b *Browser) Wait(timeout time.Duration, what string, cond func() bool) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			b.t.Fatalf("webdriver: %s: %v after %s", what, ErrTimeout, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
