package sgquery_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgpartition"
	"github.com/streamgen/streamgen/runtime/sgquery"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

const parts = 4

// instance is one fake application instance: the partitions it runs, and
// who runs the others.
type instance struct {
	local       map[int32]map[string]sgstate.Store // partition → store name → store
	owners      map[int32]sgquery.Host
	unavailable bool
	reads       int
}

func (in *instance) StoreInfo(store string) (sgquery.StoreInfo, error) {
	kinds := map[string]sgstream.StoreKind{"counts": sgstream.KeyValueStore, "wcounts": sgstream.WindowStore, "sessions": sgstream.SessionStore}
	k, ok := kinds[store]
	if !ok {
		return sgquery.StoreInfo{}, fmt.Errorf("%w %q", sgquery.ErrUnknownStore, store)
	}
	return sgquery.StoreInfo{Kind: k, Partitions: parts}, nil
}

func (in *instance) ReadLocal(ctx context.Context, store string, p int32, fn func(sgstate.Store) error) error {
	if in.unavailable {
		return fmt.Errorf("%w: restoring", sgquery.ErrUnavailable)
	}
	s, ok := in.local[p][store]
	if !ok {
		return fmt.Errorf("%w: partition %d", sgquery.ErrNotLocal, p)
	}
	in.reads++
	return fn(s)
}

func (in *instance) Owner(ctx context.Context, store string, p int32) (sgquery.Host, error) {
	h, ok := in.owners[p]
	if !ok {
		return h, fmt.Errorf("%w: rebalancing", sgquery.ErrUnavailable)
	}
	return h, nil
}

func partitionOf(key string) int32 { return sgpartition.Partition([]byte(key), parts) }

func tsValue(ts int64, v []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(ts)), v...)
}

// cluster is two instances behind HTTP servers: a runs partitions 0 and 1,
// b runs 2 and 3. Keys user0..user19 have count i+1 written at 1000+i;
// windows of 10 ms hold user<i> at starts 0 and 10; one session per key.
type cluster struct {
	a, b       *instance
	sa, sb     *httptest.Server
	keys       []string
	redirectSv *httptest.Server
}

func stores() []sgquery.Store {
	return []sgquery.Store{
		sgquery.NewKeyValue("counts", serdes.String, serdes.Int64),
		sgquery.NewTimestampedWindow("wcounts", serdes.String, serdes.Int64, 10*time.Millisecond),
		sgquery.NewSession("sessions", serdes.String, serdes.Int64),
	}
}

func newCluster(t *testing.T) *cluster {
	c := &cluster{a: &instance{local: map[int32]map[string]sgstate.Store{}, owners: map[int32]sgquery.Host{}},
		b: &instance{local: map[int32]map[string]sgstate.Store{}, owners: map[int32]sgquery.Host{}}}
	var ha, hb, hr http.Handler
	c.sa = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ha.ServeHTTP(w, r) }))
	c.sb = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hb.ServeHTTP(w, r) }))
	c.redirectSv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hr.ServeHTTP(w, r) }))
	t.Cleanup(c.sa.Close)
	t.Cleanup(c.sb.Close)
	t.Cleanup(c.redirectSv.Close)
	addr := func(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }
	for p := int32(0); p < parts; p++ {
		own, other := c.a, c.b
		if p >= 2 {
			own, other = c.b, c.a
		}
		kv := sgstate.NewMemoryKeyValue("counts")
		ws := sgstate.NewMemoryWindow("wcounts", sgstate.WindowOptions{Retention: 1 << 40, WindowSize: 10})
		ss := sgstate.NewMemorySession("sessions", sgstate.SessionOptions{Retention: 1 << 40})
		for _, s := range []sgstate.Store{kv, ws, ss} {
			if err := s.Init(nil); err != nil {
				t.Fatal(err)
			}
		}
		own.local[p] = map[string]sgstate.Store{"counts": kv, "wcounts": ws, "sessions": ss}
		ownerAddr := addr(c.a.srv(c, p))
		own.owners[p] = sgquery.Host{Addr: ownerAddr, Self: true}
		other.owners[p] = sgquery.Host{Addr: ownerAddr}
	}
	for i := 0; i < 20; i++ {
		k := fmt.Sprintf("user%d", i)
		c.keys = append(c.keys, k)
		st := c.a.local[partitionOf(k)]
		if st == nil {
			st = c.b.local[partitionOf(k)]
		}
		v, _ := serdes.Int64.Append(nil, int64(i+1))
		must(t, st["counts"].(sgstate.KeyValueStore).Put([]byte(k), tsValue(int64(1000+i), v)))
		must(t, st["wcounts"].(sgstate.WindowStore).Put([]byte(k), 0, tsValue(5, v)))
		must(t, st["wcounts"].(sgstate.WindowStore).Put([]byte(k), 10, tsValue(15, v)))
		must(t, st["sessions"].(sgstate.SessionStore).Put([]byte(k), int64(100*i), int64(100*i+50), v))
	}
	ha = sgquery.NewHandler(c.a, stores())
	hb = sgquery.NewHandler(c.b, stores())
	hr = sgquery.NewHandler(c.a, stores(), sgquery.Redirect())
	return c
}

// srv is the server of the instance that runs partition p.
func (*instance) srv(c *cluster, p int32) *httptest.Server {
	if p >= 2 {
		return c.sb
	}
	return c.sa
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func get(t *testing.T, base, path string) answer {
	t.Helper()
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := cl.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(b)}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &a.body); err != nil {
			t.Fatalf("GET %s: %d %q is not JSON: %v", path, resp.StatusCode, b, err)
		}
	}
	return a
}

func TestGetEveryKeyFromEitherInstance(t *testing.T) {
	c := newCluster(t)
	forwarded := 0
	for _, base := range []string{c.sa.URL, c.sb.URL} {
		for i, k := range c.keys {
			a := get(t, base, "/stores/counts/"+k)
			if a.status != 200 {
				t.Fatalf("GET %s/stores/counts/%s: %d %s", base, k, a.status, a.raw)
			}
			if a.body["key"] != k || a.body["value"] != float64(i+1) || a.body["timestamp"] != float64(1000+i) {
				t.Errorf("GET %s/stores/counts/%s = %s", base, k, a.raw)
			}
			owner := c.a.srv(c, partitionOf(k)).URL
			if owner != base {
				forwarded++
				if got := "http://" + a.header.Get(sgquery.OwnerHeader); got != owner {
					t.Errorf("key %s answered through %s, owner header %q, want %s", k, base, got, owner)
				}
			} else if a.header.Get(sgquery.OwnerHeader) != "" {
				t.Errorf("key %s answered locally but carries owner header %q", k, a.header.Get(sgquery.OwnerHeader))
			}
		}
	}
	if forwarded == 0 || forwarded == 2*len(c.keys) {
		t.Fatalf("forwarded %d of %d answers: the keys should spread over both instances", forwarded, 2*len(c.keys))
	}
}

func TestErrors(t *testing.T) {
	c := newCluster(t)
	for _, tc := range []struct {
		path   string
		status int
		code   string
	}{
		{"/stores/nope/user1", 404, "unknown_store"},
		{"/stores/nope", 404, "unknown_store"},
		{"/stores/counts/nobody", 404, "key_not_found"},
		{"/stores/wcounts/user1?time_from=x", 400, "bad_request"},
		{"/stores/wcounts/user1?time_from=10&time_to=5", 400, "bad_request"},
		{"/elsewhere", 404, "not_found"},
	} {
		a := get(t, c.sa.URL, tc.path)
		if a.status != tc.status || a.body["code"] != tc.code || a.body["error"] == "" {
			t.Errorf("GET %s = %d %s, want %d with code %q", tc.path, a.status, a.raw, tc.status, tc.code)
		}
	}
	if a := get(t, c.sa.URL, "/stores/nope/x"); !strings.Contains(a.raw, `\"counts\"`) {
		t.Errorf("unknown store error does not list the stores: %s", a.raw)
	}
}

func TestBadKey(t *testing.T) {
	h := sgquery.NewHandler(&instance{}, []sgquery.Store{sgquery.NewKeyValue("counts", serdes.Int64, serdes.Int64)})
	for _, key := range []string{"abc", "1.5", "null", `"7"`} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/stores/counts/"+url.PathEscape(key), nil))
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"bad_key"`) {
			t.Errorf("key %q: %d %s, want 400 bad_key", key, rec.Code, rec.Body)
		}
	}
}

func TestUnavailable(t *testing.T) {
	c := newCluster(t)
	k := ""
	for _, key := range c.keys {
		if partitionOf(key) < 2 {
			k = key
			break
		}
	}
	c.a.unavailable = true // restoring
	a := get(t, c.sa.URL, "/stores/counts/"+k)
	if a.status != 503 || a.header.Get("Retry-After") == "" || a.body["code"] != "unavailable" {
		t.Fatalf("restoring: %d %v %s, want 503 with Retry-After", a.status, a.header, a.raw)
	}
	// Forwarded to a restoring owner: its 503 and Retry-After come back.
	a = get(t, c.sb.URL, "/stores/counts/"+k)
	if a.status != 503 || a.header.Get("Retry-After") == "" {
		t.Fatalf("forwarded to a restoring owner: %d %s, want 503", a.status, a.raw)
	}
	c.a.unavailable = false
	// Rebalancing: nobody owns the partition.
	delete(c.b.owners, partitionOf(k))
	a = get(t, c.sb.URL, "/stores/counts/"+k)
	if a.status != 503 || a.header.Get("Retry-After") == "" {
		t.Fatalf("rebalancing: %d %s, want 503", a.status, a.raw)
	}
	// Assigned here but not running yet (restoring).
	delete(c.a.local, partitionOf(k))
	a = get(t, c.sa.URL, "/stores/counts/"+k)
	if a.status != 503 || !strings.Contains(a.raw, "restoring") {
		t.Fatalf("assigned, not running: %d %s, want 503 restoring", a.status, a.raw)
	}
	// A forwarded request is never forwarded again.
	req, _ := http.NewRequest("GET", c.sa.URL+"/stores/counts/"+c.keys[0], nil)
	req.Header.Set(sgquery.ForwardedHeader, "1")
	for _, key := range c.keys {
		if partitionOf(key) >= 2 {
			req.URL.Path = "/stores/counts/" + key
			break
		}
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Fatalf("forwarded request for a partition elsewhere: %d, want 503", resp.StatusCode)
	}
}

func TestRedirect(t *testing.T) {
	c := newCluster(t)
	for _, k := range c.keys {
		if partitionOf(k) < 2 {
			continue
		}
		a := get(t, c.redirectSv.URL, "/stores/counts/"+k)
		if want := c.sb.URL + "/stores/counts/" + k; a.status != 307 || a.header.Get("Location") != want {
			t.Fatalf("GET %s = %d Location %q, want 307 to %s", k, a.status, a.header.Get("Location"), want)
		}
		return
	}
}

func TestRangeGathersEveryInstance(t *testing.T) {
	c := newCluster(t)
	for _, base := range []string{c.sa.URL, c.sb.URL} {
		a := get(t, base, "/stores/counts")
		rs, _ := a.body["results"].([]any)
		if a.status != 200 || len(rs) != len(c.keys) {
			t.Fatalf("GET %s/stores/counts: %d, %d results, want %d: %s", base, a.status, len(rs), len(c.keys), a.raw)
		}
		prev := ""
		for _, r := range rs {
			k := r.(map[string]any)["key"].(string)
			if k <= prev {
				t.Fatalf("results not sorted by key: %q after %q", k, prev)
			}
			prev = k
		}
		a = get(t, base, "/stores/counts?from=user10&to=user12")
		rs, _ = a.body["results"].([]any)
		if len(rs) != 3 || rs[0].(map[string]any)["key"] != "user10" || rs[2].(map[string]any)["value"] != float64(13) {
			t.Fatalf("range user10..user12: %s", a.raw)
		}
		a = get(t, base, "/stores/wcounts?time_from=10&time_to=10")
		rs, _ = a.body["results"].([]any)
		if len(rs) != len(c.keys) || rs[0].(map[string]any)["start"] != float64(10) || rs[0].(map[string]any)["end"] != float64(20) {
			t.Fatalf("window fetch-all at 10: %s", a.raw)
		}
	}
}

func TestWindowAndSessionFetch(t *testing.T) {
	c := newCluster(t)
	for _, base := range []string{c.sa.URL, c.sb.URL} {
		a := get(t, base, "/stores/wcounts/user3")
		if a.status != 200 {
			t.Fatalf("window fetch: %d %s", a.status, a.raw)
		}
		want := `{"store":"wcounts","key":"user3","results":[{"start":0,"end":10,"value":4,"timestamp":5},{"start":10,"end":20,"value":4,"timestamp":15}]}`
		if strings.TrimSpace(a.raw) != want {
			t.Errorf("window fetch through %s:\n got %s\nwant %s", base, a.raw, want)
		}
		a = get(t, base, "/stores/wcounts/user3?time_from=5&time_to=100")
		if rs := a.body["results"].([]any); len(rs) != 1 {
			t.Errorf("window fetch from 5: %s", a.raw)
		}
		a = get(t, base, "/stores/sessions/user3")
		want = `{"store":"sessions","key":"user3","results":[{"start":300,"end":350,"value":4}]}`
		if strings.TrimSpace(a.raw) != want {
			t.Errorf("session fetch through %s:\n got %s\nwant %s", base, a.raw, want)
		}
		a = get(t, base, "/stores/sessions/user3?time_from=351")
		if rs := a.body["results"].([]any); len(rs) != 0 {
			t.Errorf("sessions ending before 351 returned: %s", a.raw)
		}
	}
}

func TestTypedAPI(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	kv := sgquery.NewKeyValue("counts", serdes.String, serdes.Int64).On(c.a)
	n := 0
	for i, k := range c.keys {
		v, ts, found, err := kv.Get(ctx, k)
		md, merr := kv.KeyMetadata(ctx, k)
		must(t, merr)
		if md.Partition != partitionOf(k) {
			t.Errorf("KeyMetadata(%s).Partition = %d, want %d", k, md.Partition, partitionOf(k))
		}
		if partitionOf(k) >= 2 {
			if err == nil || md.Owner.Self || md.Owner.Addr != strings.TrimPrefix(c.sb.URL, "http://") {
				t.Errorf("Get(%s) on the other instance: err %v, metadata %+v", k, err, md)
			}
			continue
		}
		n++
		if err != nil || !found || v != int64(i+1) || ts != int64(1000+i) || !md.Owner.Self {
			t.Errorf("Get(%s) = %d %d %v %v, metadata %+v", k, v, ts, found, err, md)
		}
	}
	var got []string
	must(t, kv.Range(ctx, nil, nil, func(k string, v, ts int64) error {
		got = append(got, k)
		return nil
	}))
	if len(got) != n {
		t.Errorf("local Range visited %d keys, want %d", len(got), n)
	}
	ws := sgquery.NewTimestampedWindow("wcounts", serdes.String, serdes.Int64, 10*time.Millisecond).On(c.b)
	var wins []sgquery.WindowValue[int64]
	for _, k := range c.keys {
		if partitionOf(k) >= 2 {
			must(t, ws.Fetch(ctx, k, 0, 100, func(w sgquery.WindowValue[int64]) error {
				wins = append(wins, w)
				return nil
			}))
			break
		}
	}
	if len(wins) != 2 || wins[1] != (sgquery.WindowValue[int64]{Start: 10, End: 20, Value: wins[1].Value, Timestamp: 15}) {
		t.Errorf("window Fetch = %+v", wins)
	}
}

// notReady is an instance that says it is not serving yet.
type notReady struct{ *instance }

func (notReady) Ready() bool { return false }

// GET /ready answers without the token, from the source's readiness; every
// other path needs the token once one is set.
func TestReadyAndToken(t *testing.T) {
	c := newCluster(t)
	for _, tc := range []struct {
		src  sgquery.Source
		want int
	}{{c.a, http.StatusOK}, {notReady{c.a}, http.StatusServiceUnavailable}} {
		srv := httptest.NewServer(sgquery.NewHandler(tc.src, stores(), sgquery.Token("tok")))
		if a := get(t, srv.URL, "/ready"); a.status != tc.want {
			t.Errorf("%T: /ready = %d %s, want %d", tc.src, a.status, a.raw, tc.want)
		}
		if a := get(t, srv.URL, "/stores"); a.status != http.StatusUnauthorized || a.body["code"] != "unauthorized" {
			t.Errorf("/stores without the token = %d %s, want 401 unauthorized", a.status, a.raw)
		}
		srv.Close()
	}
}
