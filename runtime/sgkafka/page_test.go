package sgkafka

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// TestPageHandler checks what the live page's handler serves to whom,
// on an engine that has not started: the page and its files to anyone,
// with a policy allowing only the instance itself, and holding no data;
// /status only with the token, then the topology the runtime built and
// the figures the metrics hold; every other path to the next handler.
func TestPageHandler(t *testing.T) {
	tp, err := sgstream.NewTopology("pagetest", countBuild("in", "out"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(tp, Config{Brokers: []string{"127.0.0.1:1"}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// Counters as a worker publishes them, and a dead letter.
	e.met.tasks[engine.TaskID{Sub: 0, Partition: 1}] = &taskTotals{open: true, processed: 7, nodes: []string{"src"}, forwarded: []int64{7}}
	e.met.history.deadLetter([]sgstream.Header{{Key: sgstream.HeaderErrorsException, Value: []byte("panic")}, {Key: sgstream.HeaderErrorsTopic, Value: []byte("in")}})
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "next "+r.URL.Path) })
	srv := httptest.NewServer(pageHandler(e, "s3cret", []string{"counts"}, next))
	defer srv.Close()
	get := func(path, token string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}

	res, body := get("/", "")
	if res.StatusCode != 200 || !strings.Contains(body, `src="/page/page.js"`) || !strings.Contains(body, `data-token="true"`) {
		t.Fatalf("GET /: %d %s", res.StatusCode, body)
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("GET /: content security policy %q", csp)
	}
	for _, secret := range []string{"pagetest", "counts", "src"} {
		if strings.Contains(body, `"`+secret+`"`) || strings.Contains(body, ">"+secret+"<") {
			t.Errorf("the page's HTML shows %q without the token", secret)
		}
	}
	if res, body := get("/page/page.js", ""); res.StatusCode != 200 || !strings.Contains(body, "window.streamgen") {
		t.Errorf("GET /page/page.js: %d", res.StatusCode)
	}
	if res, _ := get("/page/index.html", ""); res.StatusCode != 404 {
		t.Errorf("GET /page/index.html: %d, want 404 (only the script and the style are files)", res.StatusCode)
	}
	for _, tok := range []string{"", "wrong"} {
		if res, body := get("/status", tok); res.StatusCode != 401 || strings.Contains(body, "pagetest") {
			t.Errorf("GET /status with token %q: %d %s, want 401 and nothing of the application", tok, res.StatusCode, body)
		}
	}
	if _, body := get("/stores/counts/k", ""); body != "next /stores/counts/k" {
		t.Errorf("GET /stores/counts/k went to %q, want the next handler", body)
	}

	res, body = get("/status", "s3cret")
	var st Status
	if res.StatusCode != 200 || json.Unmarshal([]byte(body), &st) != nil {
		t.Fatalf("GET /status: %d %s", res.StatusCode, body)
	}
	if st.ApplicationID != "pagetest" || st.State != "CREATED" || len(st.Topology.Subs) != 1 || len(st.Topology.Subs[0].Nodes) != 4 || st.Topology.Subs[0].Nodes[0].Name != "src" {
		t.Errorf("status: %+v", st)
	}
	if len(st.Tasks) != 1 || st.Tasks[0].ID != "0_1" || st.Tasks[0].State != TaskRunning || st.Tasks[0].Processed != 7 {
		t.Errorf("status tasks: %+v", st.Tasks)
	}
	if len(st.Nodes) != 1 || st.Nodes[0] != (StatusNode{Name: "src", Forwarded: 7}) || st.Totals.Processed != 7 {
		t.Errorf("status nodes %+v, totals %+v", st.Nodes, st.Totals)
	}
	if st.DeadLetters.ByReason["panic"] != 1 || len(st.DeadLetters.Recent) != 1 || st.DeadLetters.Recent[0].Topic != "in" {
		t.Errorf("status dead letters: %+v", st.DeadLetters)
	}
	if st.Group.Error == "" || len(st.Queryable) != 1 {
		t.Errorf("status group %+v (want an error: not started), queryable %v", st.Group, st.Queryable)
	}
}
