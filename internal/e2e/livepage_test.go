package e2e

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/certtest"
	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/streamgen/streamgen/internal/webdriver"
	"github.com/twmb/franz-go/pkg/kgo"
)

// screenshots names a directory the live page's test writes its
// screenshots to (docs/images for the ones docs/operations.md shows).
var screenshots = flag.String("screenshots", "", "write the live page test's screenshots into this directory")

// pageInstance is one ordercounts process of the live page test, on fixed
// ports so a restarted instance is at the same address.
type pageInstance struct {
	name, stateDir, query, metrics string
	p                              *proc
}

// pageView is what the page shows, read from its DOM in one script, so
// the figures are of one render.
type pageView struct {
	Renders   int                `json:"renders"`
	Instance  string             `json:"instance"`
	Tasks     map[string]string  `json:"tasks"`     // task → state
	Processed map[string]int64   `json:"processed"` // task → processed
	Forwarded map[string]int64   `json:"forwarded"` // node → forwarded
	Rates     map[string]float64 `json:"rates"`     // node → records/s
	Lag       map[string]int64   `json:"lag"`       // topic/partition → lag
	Bytes     map[string]int64   `json:"bytes"`     // task/store → bytes
	Members   []struct {
		Instance string `json:"instance"`
		Active   string `json:"active"`
	} `json:"members"`
	Restoring int `json:"restoring"` // rows with a restore in progress
}

const readPage = `
const v = {renders: window.streamgen ? window.streamgen.renders : 0, instance: document.getElementById("instance").textContent,
  tasks: {}, processed: {}, forwarded: {}, rates: {}, lag: {}, bytes: {}, members: [], restoring: 0};
for (const r of document.querySelectorAll("#tasks tbody tr")) {
  v.tasks[r.dataset.task] = r.dataset.state;
  v.processed[r.dataset.task] = Number(r.querySelector("td.processed").textContent);
  for (const p of r.querySelectorAll("td.partitions div")) v.lag[p.dataset.topic + "/" + p.dataset.partition] = Number(p.dataset.lag);
  v.restoring += r.querySelectorAll("div.restore").length;
}
for (const r of document.querySelectorAll("#nodes tbody tr")) {
  v.forwarded[r.dataset.node] = Number(r.querySelector("td.forwarded").textContent);
  v.rates[r.dataset.node] = Number(r.querySelector("td.rate").textContent);
}
for (const r of document.querySelectorAll("#stores tbody tr")) v.bytes[r.dataset.task + "/" + r.dataset.store] = Number(r.dataset.bytes);
for (const r of document.querySelectorAll("#instances tbody tr")) v.members.push({instance: r.dataset.instance, active: r.dataset.active});
return v;`

// TestLivePageBrowser runs two ordercounts instances with TLS and a bearer
// token on the real broker while orders flow, and looks at the live page of
// each in headless Chromium: the token typed into the page unlocks it; the
// group table shows both instances and every task exactly once; node rates
// are above zero; every figure the page shows lies between two scrapes of
// the metrics endpoint taken around the page's refresh, and equals the
// scrape once the input stops; a key typed into the query box answers what
// the HTTP API answers; and after one instance's state directory is
// deleted and it restarts, its page shows a restore in progress. Without
// the token, /status and the queries answer 401 and the page's HTML names
// nothing of the application.
func TestLivePageBrowser(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	b := webdriver.Start(t)
	bin, appID := orderCountsSetup(t)
	certs := certtest.New(t, "page")
	token := randomToken(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	client := tlsClient(t, certs.CA)
	insts := []*pageInstance{newPageInstance(t, "instance 0"), newPageInstance(t, "instance 1")}
	start := func(in *pageInstance) {
		in.p = startProc(t, in.name, bin, "run", "--brokers", strings.Join(brokers, ","), "--application-id", appID,
			"--state-dir", in.stateDir, "--guarantee", "exactly_once_v2", "--cache-bytes", "0",
			"--max-warmup-replicas", "-1", "--query-addr", in.query, "--metrics-addr", in.metrics,
			"--http-tls-cert", certs.Cert, "--http-tls-key", certs.Key, "--http-tls-ca", certs.CA, "--http-token-file", tokenFile)
	}

	// A backlog first, so the count store's changelog is long enough for a
	// restore to be seen: preloadUsers users with preloadOrders orders.
	const preloadOrders, preloadUsers = 600000, 200000
	cl := newProducer(t, kgo.MaxBufferedRecords(100000))
	produceEach(t, cl, preloadOrders, 2*time.Minute, func(i int) *kgo.Record {
		return orderRecord(countOrder{id: fmt.Sprintf("p%d", i), user: fmt.Sprintf("u%d", i%preloadUsers), amount: 1, ts: t0 + int64(i)})
	})
	for _, in := range insts {
		start(in)
	}
	for _, in := range insts {
		in.p.waitLog(2*time.Minute, "RUNNING", isRunning)
	}
	// Then orders keep flowing, from users of their own, until the end.
	stopFlow := flowOrders(t, cl, 400)
	defer stopFlow()

	// Nothing without the token.
	for _, in := range insts {
		for _, addr := range []string{in.query, in.metrics} {
			for _, path := range []string{"/status", "/metrics", "/stores/order-counts-store/u1"} {
				if addr == in.metrics && path == "/stores/order-counts-store/u1" {
					continue
				}
				if code, _ := get(t, client, "https://"+addr+path, ""); code != http.StatusUnauthorized && !(addr == in.query && path == "/metrics") {
					t.Errorf("GET %s%s without the token: HTTP %d, want 401", addr, path, code)
				}
			}
			code, html := get(t, client, "https://"+addr+"/", "")
			if code != http.StatusOK || !strings.Contains(html, "/page/page.js") {
				t.Fatalf("GET %s/ without the token: HTTP %d %q, want the page", addr, code, html)
			}
			for _, secret := range []string{appID, "order-counts-store", "orders"} {
				if strings.Contains(html, secret) {
					t.Errorf("the page's HTML names %q without the token", secret)
				}
			}
		}
	}

	page := func(in *pageInstance) {
		b.Navigate("https://" + in.query + "/?refresh=200")
		b.Wait(20*time.Second, "the token form", func() bool { return b.Find("#token-form").Attr("hidden") == "" })
		b.Find("#token").Type(token)
		b.Find("#token-save").Click()
	}
	view := func() pageView {
		var v pageView
		b.Execute(&v, readPage)
		return v
	}
	waitView := func(what string, timeout time.Duration, ok func(v pageView) bool) pageView {
		var v pageView
		b.Wait(timeout, what, func() bool { v = view(); return ok(v) })
		return v
	}

	// Instance 0's page: both instances, every task once, rates above zero.
	page(insts[0])
	v := waitView("both instances with all 8 tasks and node rates above zero", 90*time.Second, func(v pageView) bool {
		return everyTaskOnce(v) == nil && positiveRates(v)
	})
	t.Logf("page of %s: members %+v", v.Instance, v.Members)
	// The instance that loses its state below must hold count tasks
	// (sub-topology 1): the balancer spreads tasks by number, so either
	// instance may hold only the stateless ones, and then has nothing to
	// restore.
	restarted := insts[1]
	for _, m := range v.Members {
		if m.Instance == v.Instance && strings.Contains(m.Active, "1_") {
			restarted = insts[0]
		}
	}

	// The figures lie between two scrapes around a refresh.
	assertBetweenScrapes(t, b, client, insts[0].metrics, token)

	// The backlog processed (its users get no more orders), a key typed
	// into the box answers what the HTTP API answers, typed.
	waitBacklog(t, client, insts, token, preloadOrders)
	b.Find("#query-store").Select("order-counts-store")
	b.Find("#query-mode").Select("key")
	b.Find("#query-key").Type("u5")
	b.Find("#query-run").Click()
	res := b.Find("#query-result")
	b.Wait(20*time.Second, "the query's answer", func() bool { return res.Attr("data-status") == "200" })
	var fromPage, fromAPI any
	if err := json.Unmarshal([]byte(res.Text()), &fromPage); err != nil {
		t.Fatalf("the query box shows %q: %v", res.Text(), err)
	}
	code, body := get(t, client, "https://"+insts[1].query+"/stores/order-counts-store/u5", token)
	if code != http.StatusOK || json.Unmarshal([]byte(body), &fromAPI) != nil {
		t.Fatalf("HTTP API: %d %s", code, body)
	}
	if !reflect.DeepEqual(fromPage, fromAPI) {
		t.Fatalf("query box shows %v, the HTTP API answers %v", fromPage, fromAPI)
	}
	if m, _ := fromAPI.(map[string]any); m["value"] != 3.0 {
		t.Errorf("u5 has 3 orders; the API answers %s", body)
	}
	t.Logf("query u5: %s", strings.TrimSpace(body))
	shot(t, b, "livepage.png")

	// That instance loses its state and restarts: its page, open throughout
	// (it polls every 100 ms and says the instance is unreachable while it
	// is down), shows the restore in progress.
	b.Navigate("https://" + restarted.query + "/?refresh=100")
	b.Wait(20*time.Second, "the token form", func() bool { return b.Find("#token-form").Attr("hidden") == "" })
	b.Find("#token").Type(token)
	b.Find("#token-save").Click()
	waitView("instance 1's page", 30*time.Second, func(v pageView) bool { return len(v.Tasks) > 0 })
	restarted.p.stop(60 * time.Second)
	if err := os.RemoveAll(restarted.stateDir); err != nil {
		t.Fatal(err)
	}
	start(restarted)
	var shown struct {
		N    int    `json:"n"`
		Text string `json:"text"`
	}
	b.Wait(2*time.Minute, "a restore in progress on "+restarted.name+"'s page", func() bool {
		b.Execute(&shown, "return {n: window.streamgen.restoresShown, text: window.streamgen.lastRestore};")
		if shown.N > 0 && len(b.FindAll("div.restore")) > 0 {
			shot(t, b, "livepage-restoring.png") // when the restore lasts long enough to be caught
		}
		return shown.N > 0
	})
	t.Logf("%s's page showed %d restore lines, the last %q", restarted.name, shown.N, shown.Text)
	// For the documentation's picture, a moment with progress if the
	// restore lasts that long (not asserted: it may end first).
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		var progress string
		b.Execute(&progress, `const d = [...document.querySelectorAll("div.restore")].find(d => !/ 0% \(/.test(d.textContent)); return d ? d.textContent : (document.querySelector("div.restore") ? "" : "gone");`)
		if progress == "gone" {
			break
		}
		if progress != "" {
			shot(t, b, "livepage-restoring.png")
			t.Logf("restore with progress: %q", progress)
			break
		}
	}
	restarted.p.waitLog(2*time.Minute, "RUNNING", isRunning)
	v = waitView("both instances with all 8 tasks after the restart", 90*time.Second, func(v pageView) bool {
		return everyTaskOnce(v) == nil && v.Restoring == 0
	})
	t.Logf("after the restart: members %+v", v.Members)

	// Once the input stops and is processed, page and scrape are equal.
	stopFlow()
	// Under exactly-once the last transaction's marker stays behind the
	// committed offset, and on a repartition partition both instances'
	// producers write: their two last markers can both follow the last
	// record, so a partition's lag ends at most at one per instance, and
	// still.
	var last pageView
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		v := view()
		if !reflect.DeepEqual(v.Lag, last.Lag) || !reflect.DeepEqual(v.Processed, last.Processed) {
			last = v
		} else if v.Renders >= last.Renders+5 && len(v.Lag) > 0 && maxLag(v) <= int64(len(insts)) {
			break // unchanged for five refreshes at least
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page's figures did not settle: %+v", v)
		}
	}
	time.Sleep(1500 * time.Millisecond) // lag is read at most once a second
	assertEqualsScrape(t, b, client, restarted.metrics, token)
}

// waitBacklog waits until the count tasks (sub-topology 1) of the
// instances processed n records between them, as their /status says.
func waitBacklog(t *testing.T, cl *http.Client, insts []*pageInstance, token string, n int64) {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var total int64
		for _, in := range insts {
			code, body := get(t, cl, "https://"+in.query+"/status", token)
			var st struct {
				Tasks []struct {
					ID        string `json:"id"`
					Processed int64  `json:"processed"`
				} `json:"tasks"`
			}
			if code == http.StatusOK && json.Unmarshal([]byte(body), &st) == nil {
				for _, k := range st.Tasks {
					if strings.HasPrefix(k.ID, "1_") {
						total += k.Processed
					}
				}
			}
		}
		if total >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the count tasks processed %d of the %d backlog records", total, n)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func maxLag(v pageView) int64 {
	var m int64
	for _, l := range v.Lag {
		m = max(m, l)
	}
	return m
}

func newPageInstance(t *testing.T, name string) *pageInstance {
	return &pageInstance{name: name, stateDir: filepath.Join(t.TempDir(), "state"), query: freeAddr(t), metrics: freeAddr(t)}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func randomToken(t *testing.T) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

func tlsClient(t *testing.T, caFile string) *http.Client {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// get is a GET with the bearer token ("" for none); a connection error is
// status 0.
func get(t *testing.T, cl *http.Client, url, token string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := cl.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func orderRecord(o countOrder) *kgo.Record {
	return &kgo.Record{Topic: "orders", Partition: partitionOf(o.id, 4), Key: []byte(o.id), Value: o.encode(), Timestamp: time.UnixMilli(o.ts)}
}

// flowOrders produces orders of users f0..f49 at about perSecond until the
// returned function is called (which waits for them to be written).
func flowOrders(t *testing.T, cl *kgo.Client, perSecond int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second / time.Duration(perSecond))
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			cl.Produce(ctx, orderRecord(countOrder{id: fmt.Sprintf("f%d", i), user: fmt.Sprintf("f%d", i%50), amount: 1, ts: time.Now().UnixMilli()}), nil)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			fctx, fcancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer fcancel()
			if err := cl.Flush(fctx); err != nil {
				t.Errorf("flushing the flowing orders: %v", err)
			}
		})
	}
}

// everyTaskOnce checks the group table: two instances, and the 8 tasks of
// ordercounts (2 sub-topologies × 4 partitions) each held by exactly one.
func everyTaskOnce(v pageView) error {
	instances := map[string]bool{}
	held := map[string]int{}
	for _, m := range v.Members {
		instances[m.Instance] = true
		for _, id := range strings.Fields(m.Active) {
			held[id]++
		}
	}
	if len(instances) != 2 {
		return fmt.Errorf("instances %v, want 2", instances)
	}
	for sub := 0; sub < 2; sub++ {
		for p := 0; p < 4; p++ {
			if id := fmt.Sprintf("%d_%d", sub, p); held[id] != 1 {
				return fmt.Errorf("task %s held %d times", id, held[id])
			}
		}
	}
	if len(held) != 8 {
		return fmt.Errorf("tasks held: %v, want 8", held)
	}
	return nil
}

func positiveRates(v pageView) bool {
	if len(v.Rates) == 0 {
		return false
	}
	for _, r := range v.Rates {
		if r > 0 {
			return true
		}
	}
	return false
}

func shot(t *testing.T, b *webdriver.Browser, name string) {
	dir := *screenshots
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name), b.Screenshot(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scrape is the metrics endpoint's samples: "name{label="v",...}" → value,
// labels sorted by name.
type scrape map[string]float64

var sampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$`)
var labelRE = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

func scrapeMetrics(t *testing.T, cl *http.Client, addr, token string) scrape {
	code, body := get(t, cl, "https://"+addr+"/metrics", token)
	if code != http.StatusOK {
		t.Fatalf("GET %s/metrics: HTTP %d", addr, code)
	}
	out := scrape{}
	for _, line := range strings.Split(body, "\n") {
		m := sampleRE.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(line, "#") {
			continue
		}
		var labels []string
		for _, l := range labelRE.FindAllStringSubmatch(m[2], -1) {
			labels = append(labels, l[1]+"="+l[2])
		}
		sort.Strings(labels)
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			continue
		}
		out[m[1]+"{"+strings.Join(labels, ",")+"}"] = v
	}
	return out
}

// figures are the page's figures as the metrics endpoint names them.
func (v pageView) figures() map[string]float64 {
	out := map[string]float64{}
	for id, n := range v.Processed {
		out["streamgen_task_processed_records_total{task="+id+"}"] = float64(n)
	}
	for node, n := range v.Forwarded {
		out["forwarded{node="+node+"}"] = float64(n)
	}
	for tp, n := range v.Lag {
		topic, p, _ := strings.Cut(tp, "/")
		out["streamgen_consumer_lag_records{partition="+p+",topic="+topic+"}"] = float64(n)
	}
	for ts, n := range v.Bytes {
		task, store, _ := strings.Cut(ts, "/")
		out["streamgen_store_disk_bytes{store="+store+",task="+task+"}"] = float64(n)
	}
	return out
}

// nodeTotals adds the per-task node counters up per node, as the page does.
func (s scrape) nodeTotals() scrape {
	re := regexp.MustCompile(`^streamgen_node_forwarded_records_total\{node=([^,]*),task=`)
	for k, v := range s {
		if m := re.FindStringSubmatch(k); m != nil {
			s["forwarded{node="+m[1]+"}"] += v
		}
	}
	return s
}

// assertBetweenScrapes refreshes the page between two scrapes: every
// counter the page shows lies between them.
func assertBetweenScrapes(t *testing.T, b *webdriver.Browser, cl *http.Client, metrics, token string) {
	before := scrapeMetrics(t, cl, metrics, token).nodeTotals()
	var ok bool
	b.Execute(&ok, "return window.streamgen.refresh();")
	if !ok {
		t.Fatal("the page's refresh failed")
	}
	var v pageView
	b.Execute(&v, readPage)
	after := scrapeMetrics(t, cl, metrics, token).nodeTotals()
	checked := 0
	for k, n := range v.figures() {
		if !strings.HasPrefix(k, "streamgen_task_processed") && !strings.HasPrefix(k, "forwarded") {
			continue // gauges: compared once the input stops
		}
		lo, okLo := before[k]
		hi, okHi := after[k]
		if !okHi {
			t.Errorf("the page shows %s = %v, the metrics endpoint has no such series", k, n)
			continue
		}
		if !okLo {
			lo = 0
		}
		if n < lo || n > hi {
			t.Errorf("the page shows %s = %v, the metrics endpoint %v before and %v after", k, n, lo, hi)
		}
		checked++
	}
	if len(v.Processed) == 0 || len(v.Forwarded) == 0 {
		t.Fatalf("the page shows no task or no node counters: %+v", v)
	}
	t.Logf("%d counters of the page between two scrapes", checked)
}

// assertEqualsScrape compares every figure of the page with one scrape
// when nothing moves.
func assertEqualsScrape(t *testing.T, b *webdriver.Browser, cl *http.Client, metrics, token string) {
	var ok bool
	b.Execute(&ok, "return window.streamgen.refresh();")
	var v pageView
	b.Execute(&v, readPage)
	s := scrapeMetrics(t, cl, metrics, token).nodeTotals()
	figs := v.figures()
	kinds := map[string]int{}
	for k, n := range figs {
		want, found := s[k]
		if !found {
			t.Errorf("the page shows %s = %v, the metrics endpoint has no such series", k, n)
			continue
		}
		if n != want {
			t.Errorf("the page shows %s = %v, the metrics endpoint %v", k, n, want)
		}
		kinds[k[:strings.IndexByte(k, '{')]]++
	}
	for _, kind := range []string{"streamgen_task_processed_records_total", "forwarded", "streamgen_consumer_lag_records", "streamgen_store_disk_bytes"} {
		if kinds[kind] == 0 {
			t.Errorf("the page shows no %s figure: %+v", kind, v)
		}
	}
	t.Logf("page equals the scrape: %v", kinds)
}
