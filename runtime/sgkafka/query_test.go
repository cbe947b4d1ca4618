package sgkafka

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgquery"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// iqBuild counts records per int64 key (store "counts") and per key in
// 10 ms tumbling windows (store "wcounts").
func iqBuild(in, out string) func(b *sgstream.Builder) {
	return func(b *sgstream.Builder) {
		s := sgstream.Source(b, "src", sgstream.SourceConfig[int64, string]{Topic: in, Key: serdes.Int64, Value: serdes.String})
		g := sgstream.GroupByKey(s, serdes.Int64, serdes.String)
		c := sgstream.Count(g, "count", "counts")
		sgstream.To(sgstream.ToStream(c, "s"), "sink", out, sgstream.SinkConfig[int64, int64]{Key: serdes.Int64, Value: serdes.Int64})
		w := sgstream.WindowedBy(g, "w", sgstream.TimeWindows{Size: 10 * time.Millisecond, Grace: time.Hour})
		sgstream.CountWindowed(w, "wcount", "wcounts", sgstream.EmitOnUpdate)
	}
}

func iqApp() *sgapp.App {
	return &sgapp.App{Stores: []sgquery.Store{
		sgquery.NewKeyValue("counts", serdes.Int64, serdes.Int64),
		sgquery.NewTimestampedWindow("wcounts", serdes.Int64, serdes.Int64, 10*time.Millisecond),
	}}
}

type iqInstance struct {
	e    *Engine
	qs   *QueryServer
	base string
	done chan error
}

// startIQ starts an instance with a query endpoint on 127.0.0.1. The
// endpoint serves before the engine runs, as in the run command.
func startIQ(t *testing.T, tp *sgstream.Topology, cfg Config, beforeRun func(base string)) *iqInstance {
	return startIQWith(t, tp, cfg, HTTPSecurity{}, beforeRun)
}

// startIQWith is startIQ with the endpoint secured by sec.
func startIQWith(t *testing.T, tp *sgstream.Topology, cfg Config, sec HTTPSecurity, beforeRun func(base string)) *iqInstance {
	t.Helper()
	qs, err := ListenQueries("127.0.0.1:0", "", false, sec, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.QueryAddr = qs.Addr()
	cfg.StateDir = t.TempDir()
	cfg.Logger = testLogger(t)
	e, err := New(tp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	qs.Start(e, iqApp().Stores)
	in := &iqInstance{e: e, qs: qs, base: sec.Scheme() + "://" + qs.Addr(), done: make(chan error, 1)}
	if beforeRun != nil {
		beforeRun(in.base)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { in.done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-in.done:
		case <-time.After(60 * time.Second):
			t.Error("engine did not stop")
		}
		qs.Stop()
	})
	return in
}

type iqAnswer struct {
	status int
	owner  string
	retry  string
	body   map[string]any
	raw    string
}

func iqGet(t *testing.T, url string) iqAnswer {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := iqAnswer{status: resp.StatusCode, owner: resp.Header.Get(sgquery.OwnerHeader), retry: resp.Header.Get("Retry-After"), raw: string(b)}
	if err := json.Unmarshal(b, &a.body); err != nil {
		t.Fatalf("GET %s: %d %q is not JSON", url, resp.StatusCode, b)
	}
	return a
}

// Two instances share the four partitions; every key is answered by
// either, the one that does not hold it forwarding to the one that does.
func TestInteractiveQueriesAcrossTwoInstances(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		const partitions, keys, n = 4, 24, 240
		createTopic(t, ev.brokers, ev.in, partitions)
		createTopic(t, ev.brokers, ev.out, partitions)
		tp, err := sgstream.NewTopology(ev.appID, iqBuild(ev.in, ev.out))
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Brokers: ev.brokers, ApplicationID: ev.appID, CommitInterval: 200 * time.Millisecond}
		a := startIQ(t, tp, cfg, func(base string) {
			// Before the engine runs: unavailable, not an error.
			r := iqGet(t, base+"/stores/counts/1")
			if r.status != http.StatusServiceUnavailable || r.retry == "" || r.body["code"] != "unavailable" {
				t.Errorf("query before the engine runs: %d %s (Retry-After %q), want 503 with Retry-After", r.status, r.raw, r.retry)
			}
		})
		b := startIQ(t, tp, cfg, nil)
		waitFor(t, 60*time.Second, "both instances running with two tasks each", func() bool {
			return a.e.State() == Running && b.e.State() == Running &&
				a.e.ownedTasks() == partitions/2 && b.e.ownedTasks() == partitions/2
		})

		var recs []sgstream.RawRecord
		want := map[int64]int64{}
		for i := 0; i < n; i++ {
			k := int64(i % keys * 1000) // spread over partitions
			kb, _ := serdes.Int64.Append(nil, k)
			recs = append(recs, sgstream.RawRecord{Topic: ev.in, Key: kb, Value: []byte("v"), Timestamp: tsBase + int64(i)})
			want[k]++
		}
		produce(t, ev.brokers, partitions, recs)
		waitFor(t, 60*time.Second, "every record processed", func() bool {
			return a.e.Processed()+b.e.Processed() >= n
		})

		forwarded := map[string]int{}
		for k, count := range want {
			for _, in := range []*iqInstance{a, b} {
				var r iqAnswer
				for try := 0; try < 100; try++ {
					r = iqGet(t, in.base+"/stores/counts/"+strconv.FormatInt(k, 10))
					if r.status != http.StatusServiceUnavailable {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
				if r.status != http.StatusOK || r.body["value"] != float64(count) || r.body["key"] != float64(k) {
					t.Fatalf("GET %s/stores/counts/%d = %d %s, want count %d", in.base, k, r.status, r.raw, count)
				}
				if r.owner != "" {
					if "http://"+r.owner == in.base {
						t.Fatalf("%s forwarded key %d to itself", in.base, k)
					}
					forwarded[in.base]++
				}
			}
		}
		if forwarded[a.base] == 0 || forwarded[b.base] == 0 || forwarded[a.base]+forwarded[b.base] != len(want) {
			t.Fatalf("forwarded answers per instance %v: want each key forwarded by exactly the instance that does not hold it (%d keys)", forwarded, len(want))
		}

		// A range gathers every instance's partitions.
		r := iqGet(t, a.base+"/stores/counts")
		if rs, _ := r.body["results"].([]any); r.status != http.StatusOK || len(rs) != len(want) {
			t.Fatalf("GET /stores/counts: %d, %d results, want %d: %.300s", r.status, len(rs), len(want), r.raw)
		}
		// Window fetch of a key through the instance that does not hold it.
		k := int64(0)
		r = iqGet(t, a.base+"/stores/wcounts/0")
		if r.status != http.StatusOK {
			t.Fatalf("window fetch: %d %s", r.status, r.raw)
		}
		total := 0.0
		for _, w := range r.body["results"].([]any) {
			total += w.(map[string]any)["value"].(float64)
		}
		if total != float64(want[k]) {
			t.Fatalf("windows of key 0 count %v records, want %d: %s", total, want[k], r.raw)
		}

		// Errors.
		for _, c := range []struct {
			path   string
			status int
			code   string
		}{
			{"/stores/nope/1", http.StatusNotFound, "unknown_store"},
			{"/stores/counts/abc", http.StatusBadRequest, "bad_key"},
			{"/stores/counts/7", http.StatusNotFound, "key_not_found"},
		} {
			for _, in := range []*iqInstance{a, b} {
				r := iqGet(t, in.base+c.path)
				if r.status != c.status || r.body["code"] != c.code {
					t.Errorf("GET %s%s = %d %s, want %d %s", in.base, c.path, r.status, r.raw, c.status, c.code)
				}
			}
		}

		// The typed API answers local keys and names the owner of others.
		kv := sgquery.NewKeyValue("counts", serdes.Int64, serdes.Int64).On(a.e)
		local := 0
		for k, count := range want {
			md, err := kv.KeyMetadata(context.Background(), k)
			if err != nil {
				t.Fatal(err)
			}
			v, _, found, err := kv.Get(context.Background(), k)
			if md.Owner.Self {
				local++
				if err != nil || !found || v != count {
					t.Fatalf("typed Get(%d) on its owner = %d %v %v, want %d", k, v, found, err, count)
				}
			} else if md.Owner.Addr != b.qs.Addr() || err == nil {
				t.Fatalf("typed Get(%d) held by the other instance: metadata %+v, error %v", k, md, err)
			}
		}
		if local == 0 || local == len(want) {
			t.Fatalf("instance a holds %d of %d keys", local, len(want))
		}
	})
}

// ownedTasks is the number of tasks running on this instance.
func (e *Engine) ownedTasks() int {
	n := 0
	e.iq.tasks.Range(func(_, _ any) bool { n++; return true })
	return n
}

var _ = fmt.Sprint
