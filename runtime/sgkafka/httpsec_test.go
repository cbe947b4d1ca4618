package sgkafka

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/certtest"
	"github.com/streamgen/streamgen/runtime/internal/httpsec"
	"github.com/streamgen/streamgen/runtime/sgquery"
	"github.com/streamgen/streamgen/runtime/sgstream"
	"github.com/streamgen/streamgen/serdes"
)

// secureHTTP is the endpoints' security as the run command's flags load
// it: mutual TLS with one CA and a token.
func secureHTTP(t *testing.T) (HTTPSecurity, certtest.Files) {
	t.Helper()
	files := certtest.New(t, "iq")
	srv, err := httpsec.ServerTLS(files.Cert, files.Key, files.CA)
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := httpsec.ClientTLS(files.CA, files.Cert, files.Key, true)
	if err != nil {
		t.Fatal(err)
	}
	return HTTPSecurity{TLS: srv, ForwardTLS: fwd, Token: "s3cret-token"}, files
}

// securedGet sends GET url with cl and the token (none when empty).
func securedGet(t *testing.T, cl *http.Client, url, token string) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	httpsec.SetBearer(req, token)
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body map[string]any
	json.Unmarshal(b, &body)
	return resp.StatusCode, body, resp.Header
}

// Two instances serve queries over mutual TLS with a token: a request
// without the token is refused; with it, every key is answered, those of
// the other instance's partitions forwarded over TLS with the token. A
// client without a certificate does not get past the handshake.
func TestInteractiveQueriesOverTLSWithToken(t *testing.T) {
	forBackends(t, func(t *testing.T, ev testEnv) {
		const partitions, keys = 4, 16
		createTopic(t, ev.brokers, ev.in, partitions)
		createTopic(t, ev.brokers, ev.out, partitions)
		tp, err := sgstream.NewTopology(ev.appID, iqBuild(ev.in, ev.out))
		if err != nil {
			t.Fatal(err)
		}
		sec, _ := secureHTTP(t)
		cfg := Config{Brokers: ev.brokers, ApplicationID: ev.appID, CommitInterval: 200 * time.Millisecond}
		a := startIQWith(t, tp, cfg, sec, nil)
		b := startIQWith(t, tp, cfg, sec, nil)
		waitFor(t, 60*time.Second, "both instances running with two tasks each", func() bool {
			return a.e.State() == Running && b.e.State() == Running && a.e.ownedTasks() == 2 && b.e.ownedTasks() == 2
		})
		var recs []sgstream.RawRecord
		for i := range keys {
			kb, _ := serdes.Int64.Append(nil, int64(i*1000))
			recs = append(recs, sgstream.RawRecord{Topic: ev.in, Key: kb, Value: []byte("v"), Timestamp: tsBase + int64(i)})
		}
		produce(t, ev.brokers, partitions, recs)
		waitFor(t, 60*time.Second, "every record processed", func() bool { return a.e.Processed()+b.e.Processed() >= keys })
		cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: sec.ForwardTLS}}

		if status, body, hdr := securedGet(t, cl, a.base+"/stores/counts/0", ""); status != http.StatusUnauthorized || body["code"] != "unauthorized" || hdr.Get("WWW-Authenticate") == "" {
			t.Errorf("query without the token: %d %v, want 401 unauthorized with WWW-Authenticate", status, body)
		}
		if status, _, _ := securedGet(t, cl, a.base+"/stores/counts/0", "wrong"); status != http.StatusUnauthorized {
			t.Errorf("query with a wrong token: %d, want 401", status)
		}
		forwarded := 0
		waitFor(t, 60*time.Second, "every key answered through a", func() bool {
			forwarded = 0
			for i := range keys {
				status, body, hdr := securedGet(t, cl, a.base+"/stores/counts/"+itoa(i*1000), sec.Token)
				if status != http.StatusOK || body["value"] != float64(1) {
					return false
				}
				if hdr.Get(sgquery.OwnerHeader) != "" {
					forwarded++
				}
			}
			return true
		})
		if forwarded == 0 {
			t.Error("no key was forwarded to the other instance: the test does not cover forwarding over TLS")
		}
		noCert := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: sec.ForwardTLS.RootCAs}}}
		req, _ := http.NewRequest(http.MethodGet, a.base+"/stores/counts/0", nil)
		httpsec.SetBearer(req, sec.Token)
		if resp, err := noCert.Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("a client without a certificate got %d, want a failed handshake", resp.StatusCode)
		}
	})
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// The metrics endpoint under TLS and a token: refused without the token,
// scraped with it.
func TestMetricsOverTLSWithToken(t *testing.T) {
	sec, files := secureHTTP(t)
	addr, stop, err := ServeMetrics("127.0.0.1:0", NewMetricsRegistry(), sec)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: sec.ForwardTLS}}
	url := "https://" + addr + "/metrics"
	if status, _, _ := securedGet(t, cl, url, ""); status != http.StatusUnauthorized {
		t.Errorf("scrape without the token: %d, want 401", status)
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	httpsec.SetBearer(req, sec.Token)
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "go_goroutines") {
		t.Errorf("scrape with the token: %d, want 200 with the Go collector's series", resp.StatusCode)
	}
	// The token file as the run command reads it: trimmed, never empty.
	tf := filepath.Join(filepath.Dir(files.CA), "token")
	os.WriteFile(tf, []byte(sec.Token+"\n"), 0o600)
	if tok, err := httpsec.ReadToken(tf); err != nil || tok != sec.Token {
		t.Errorf("ReadToken = %q, %v", tok, err)
	}
	os.WriteFile(tf, []byte("\n"), 0o600)
	if _, err := httpsec.ReadToken(tf); err == nil {
		t.Error("an empty token file was accepted")
	}
}
