package webdriver

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestBrowser drives Chromium through a page whose script answers typing:
// what the browser shows proves the page's script ran and the keys
// arrived, which no fake browser could.
func TestBrowser(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!DOCTYPE html><input id=in><button id=go>go</button><p id=out></p>
<script>document.getElementById("go").onclick = () => { document.getElementById("out").textContent = "got " + document.getElementById("in").value.toUpperCase(); };</script>`))
	}))
	defer srv.Close()
	b := Start(t)
	b.Navigate(srv.URL)
	b.Find("#in").Type("abc")
	b.Find("#go").Click()
	b.Wait(10*time.Second, "script answer", func() bool { return b.Find("#out").Text() == "got ABC" })
	var n int
	b.Execute(&n, "return arguments[0] + 1;", 41)
	if n != 42 {
		t.Fatalf("script returned %d, want 42", n)
	}
	if png := b.Screenshot(); !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot is not a PNG: % x", png[:min(8, len(png))])
	}
	if len(b.FindAll("#missing")) != 0 {
		t.Fatal("found an element that is not there")
	}
}
