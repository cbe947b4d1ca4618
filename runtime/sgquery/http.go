package sgquery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/httpsec"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// Headers of the HTTP endpoint.
const (
	// ForwardedHeader marks a request one instance forwarded to another.
	// An instance that gets a forwarded request for a partition it does not
	// run answers 503 instead of forwarding again, so a request never
	// loops while ownership moves.
	ForwardedHeader = "X-Streamgen-Forwarded"
	// OwnerHeader is set on answers an instance forwarded: the query
	// address of the instance that answered.
	OwnerHeader = "X-Streamgen-Owner"
)

// retryAfter is the Retry-After of 503 answers, in seconds: about one
// rebalance step or a short restoration.
const retryAfter = "1"

// Opt configures the HTTP endpoint (NewHandler).
type Opt interface{ apply(*config) }

type config struct {
	redirect bool
	client   *http.Client
	logger   *slog.Logger
	token    string
	scheme   string
}

type opt func(*config)

func (f opt) apply(c *config) { f(c) }

// Redirect makes the endpoint answer a key another instance owns with a
// 307 redirect to that instance instead of forwarding the request (default:
// forward). Range and fetch-all queries, which gather every instance's
// part, are always forwarded.
func Redirect() Opt { return opt(func(c *config) { c.redirect = true }) }

// ForwardClient is the HTTP client that forwards requests to other
// instances (default: a client with a 10 s timeout).
func ForwardClient(cl *http.Client) Opt { return opt(func(c *config) { c.client = cl }) }

// Token makes the endpoint answer only requests carrying
// "Authorization: Bearer <token>" (others get 401 unauthorized), and
// forwarded requests carry it to the other instances, which share it.
func Token(token string) Opt { return opt(func(c *config) { c.token = token }) }

// ForwardHTTPS forwards to (and redirects at) other instances over https,
// for instances that serve TLS; ForwardClient brings the client's TLS
// settings (the CA that signed their certificates, a client certificate).
func ForwardHTTPS() Opt { return opt(func(c *config) { c.scheme = "https" }) }

// Logger receives the endpoint's logs (default: discard).
func Logger(l *slog.Logger) Opt { return opt(func(c *config) { c.logger = l }) }

type handler struct {
	src    Source
	stores map[string]*storeDef
	names  []string
	cfg    config
	mux    *http.ServeMux
}

// NewHandler is the HTTP endpoint of interactive queries over src, for the
// stores listed:
//
//	GET /ready                                  200 when queries are served now, else 503 (no token needed)
//	GET /stores                                 the queryable stores
//	GET /stores/{store}/{key}                   a key's value (key-value store)
//	GET /stores/{store}/{key}?time_from=&time_to=  a key's windows or sessions
//	GET /stores/{store}?from=&to=               a key range, gathered from every instance
//	GET /stores/{store}?time_from=&time_to=     every key's windows (by start) or sessions (by end)
//
// Keys in paths and in from/to are the key itself for string keys and its
// replay-format JSON otherwise; answers are JSON. A key held by another
// instance is forwarded there (or redirected, see Redirect). Errors are
// {"error": message, "code": code}: 404 unknown_store and key_not_found,
// 400 bad_key and bad_request, 503 unavailable (with Retry-After) while the
// store restores or the group rebalances.
func NewHandler(src Source, stores []Store, opts ...Opt) http.Handler {
	h := &handler{src: src, stores: map[string]*storeDef{}}
	for _, s := range stores {
		h.stores[s.Name()] = s.def()
		h.names = append(h.names, s.Name())
	}
	sort.Strings(h.names)
	for _, o := range opts {
		o.apply(&h.cfg)
	}
	if h.cfg.client == nil {
		h.cfg.client = &http.Client{Timeout: 10 * time.Second}
	}
	if h.cfg.logger == nil {
		h.cfg.logger = slog.New(slog.DiscardHandler)
	}
	if h.cfg.scheme == "" {
		h.cfg.scheme = "http"
	}
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("GET /stores", h.list)
	h.mux.HandleFunc("GET /stores/{store}", h.scan)
	h.mux.HandleFunc("GET /stores/{store}/{key...}", h.point)
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no such endpoint: %s %s (want GET /stores/{store}/{key})", r.Method, r.URL.Path))
	})
	return h
}

// Readiness is implemented by sources that can say whether they serve
// queries now (an engine: RUNNING, every task restored).
type Readiness interface{ Ready() bool }

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/ready" {
		// Without the token: an orchestrator's probe cannot carry one, and
		// the answer holds no data.
		h.ready(w)
		return
	}
	if !httpsec.Authorized(r, h.cfg.token) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="streamgen"`)
		writeError(w, http.StatusUnauthorized, "unauthorized", "streamgen: this endpoint needs the bearer token of --http-token-file")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// ready answers GET /ready: 200 while the source serves queries, 503 (with
// Retry-After) while it starts, rebalances or restores.
func (h *handler) ready(w http.ResponseWriter) {
	if rd, ok := h.src.(Readiness); ok && !rd.Ready() {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "streamgen: not ready: starting, rebalancing or restoring")
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Ready bool `json:"ready"`
	}{true})
}

type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfter)
	}
	writeJSON(w, status, errorBody{Error: msg, Code: code})
}

// fail answers err with the status its kind calls for.
func (h *handler) fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrUnknownStore):
		writeError(w, http.StatusNotFound, "unknown_store", err.Error())
	case errors.Is(err, ErrBadKey):
		writeError(w, http.StatusBadRequest, "bad_key", err.Error())
	case errors.Is(err, ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
	default:
		h.cfg.logger.Warn("interactive query failed", "error", err.Error())
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
	}
}

func (h *handler) store(w http.ResponseWriter, r *http.Request) *storeDef {
	name := r.PathValue("store")
	d := h.stores[name]
	if d == nil {
		writeError(w, http.StatusNotFound, "unknown_store",
			fmt.Sprintf("streamgen: unknown store %q: the queryable stores are %s (GET /stores)", name, quoteList(h.names)))
	}
	return d
}

func quoteList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

func kindName(k sgstream.StoreKind) string {
	switch k {
	case sgstream.WindowStore:
		return "window"
	case sgstream.SessionStore:
		return "session"
	}
	return "key_value"
}

func (h *handler) list(w http.ResponseWriter, r *http.Request) {
	type store struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
	}
	out := struct {
		Stores []store `json:"stores"`
	}{Stores: []store{}}
	for _, n := range h.names {
		out.Stores = append(out.Stores, store{Name: n, Kind: kindName(h.stores[n].kind)})
	}
	writeJSON(w, http.StatusOK, out)
}

// timeBounds parses time_from and time_to (ms; default: all time).
func timeBounds(v url.Values) (from, to int64, err error) {
	from, to = 0, math.MaxInt64
	if s := v.Get("time_from"); s != "" {
		if from, err = strconv.ParseInt(s, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("streamgen: time_from %q: want milliseconds since the epoch", s)
		}
	}
	if s := v.Get("time_to"); s != "" {
		if to, err = strconv.ParseInt(s, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("streamgen: time_to %q: want milliseconds since the epoch", s)
		}
	}
	if from > to {
		return 0, 0, fmt.Errorf("streamgen: time_from %d is after time_to %d", from, to)
	}
	return from, to, nil
}

// result is one entry of an answer.
type result struct {
	Key       json.RawMessage `json:"key,omitempty"`
	Start     *int64          `json:"start,omitempty"`
	End       *int64          `json:"end,omitempty"`
	Value     json.RawMessage `json:"value"`
	Timestamp *int64          `json:"timestamp,omitempty"`

	// sort orders gathered results: the serialized key.
	sort []byte
}

// listBody is the answer of window and session fetches and of scans.
type listBody struct {
	Store   string          `json:"store"`
	Key     json.RawMessage `json:"key,omitempty"`
	Results []result        `json:"results"`
	staleness
}

// kvBody is the answer of a key-value get.
type kvBody struct {
	Store     string          `json:"store"`
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
	Timestamp int64           `json:"timestamp"`
	staleness
}

// staleness marks an answer read from a standby replica (?stale=true):
// Lag is how many changelog offsets the copy had not applied.
type staleness struct {
	Stale bool   `json:"stale,omitempty"`
	Lag   *int64 `json:"lag,omitempty"`
}

// standbyRead answers a point query from this instance's standby copy
// when the request allows stale answers (?stale=true, as Kafka Streams'
// StoreQueryParameters.enableStaleStores); ErrNotLocal otherwise.
func (h *handler) standbyRead(r *http.Request, d *storeDef, p int32, kb []byte, q query) ([]entry, staleness, error) {
	ss, ok := h.src.(StandbySource)
	if !ok || r.URL.Query().Get("stale") != "true" {
		return nil, staleness{}, ErrNotLocal
	}
	es, lag, err := d.standbyRead(r.Context(), ss, p, kb, q)
	if err != nil {
		return nil, staleness{}, err
	}
	return es, staleness{Stale: true, Lag: &lag}, nil
}

func (d *storeDef) render(e entry, withKey bool) (result, error) {
	var res result
	var err error
	if withKey {
		if res.Key, err = d.keyJSON(e.key); err != nil {
			return res, err
		}
		res.sort = e.key
	}
	v, ts, hasTs, err := d.valueJSON(e.value)
	if err != nil {
		return res, err
	}
	res.Value = v
	if hasTs {
		res.Timestamp = &ts
	}
	if d.kind != sgstream.KeyValueStore {
		start, end := e.start, e.end
		res.Start, res.End = &start, &end
	}
	return res, nil
}

func (h *handler) point(w http.ResponseWriter, r *http.Request) {
	d := h.store(w, r)
	if d == nil {
		return
	}
	kb, err := d.keyFromText(r.PathValue("key"))
	if err != nil {
		h.fail(w, err)
		return
	}
	q := query{}
	if d.kind != sgstream.KeyValueStore {
		if q.timeFrom, q.timeTo, err = timeBounds(r.URL.Query()); err != nil {
			writeError(w, http.StatusBadRequest, "bad_request", err.Error())
			return
		}
	}
	es, p, err := d.pointRead(r.Context(), h.src, kb, q)
	var stale staleness
	if errors.Is(err, ErrNotLocal) {
		if es, stale, err = h.standbyRead(r, d, p, kb, q); errors.Is(err, ErrNotLocal) {
			h.elsewhere(w, r, d, p)
			return
		}
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	keyJSON, err := d.keyJSON(kb)
	if err != nil {
		h.fail(w, err)
		return
	}
	if d.kind == sgstream.KeyValueStore {
		if len(es) == 0 {
			writeError(w, http.StatusNotFound, "key_not_found", fmt.Sprintf("streamgen: store %q has no value for key %s", d.name, keyJSON))
			return
		}
		res, err := d.render(es[0], false)
		if err != nil {
			h.fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, kvBody{Store: d.name, Key: keyJSON, Value: res.Value, Timestamp: *res.Timestamp, staleness: stale})
		return
	}
	body := listBody{Store: d.name, Key: keyJSON, Results: []result{}, staleness: stale}
	for _, e := range es {
		res, err := d.render(e, false)
		if err != nil {
			h.fail(w, err)
			return
		}
		body.Results = append(body.Results, res)
	}
	writeJSON(w, http.StatusOK, body)
}

// elsewhere answers a point query whose partition this instance does not
// run: forwarded to (or redirected at) the owner.
func (h *handler) elsewhere(w http.ResponseWriter, r *http.Request, d *storeDef, p int32) {
	if r.Header.Get(ForwardedHeader) != "" {
		writeError(w, http.StatusServiceUnavailable, "unavailable",
			fmt.Sprintf("streamgen: store %q partition %d is moving to another instance", d.name, p))
		return
	}
	host, err := h.src.Owner(r.Context(), d.name, p)
	if err != nil {
		h.fail(w, err)
		return
	}
	switch {
	case host.Self:
		// Assigned here, not running yet: restoring its stores.
		writeError(w, http.StatusServiceUnavailable, "unavailable",
			fmt.Sprintf("streamgen: store %q partition %d is restoring", d.name, p))
		return
	case host.Addr == "":
		writeError(w, http.StatusBadGateway, "owner_not_queryable",
			fmt.Sprintf("streamgen: store %q partition %d is on an instance that runs without --query-addr", d.name, p))
		return
	}
	u := h.cfg.scheme + "://" + host.Addr + r.URL.RequestURI()
	if h.cfg.redirect {
		w.Header().Set(OwnerHeader, host.Addr)
		w.Header().Set("Location", u)
		writeJSON(w, http.StatusTemporaryRedirect, struct {
			Location string `json:"location"`
		}{u})
		return
	}
	status, hdr, body, err := h.get(r.Context(), u)
	if err != nil {
		h.cfg.logger.Debug("forwarding interactive query", "owner", host.Addr, "error", err.Error())
		writeError(w, http.StatusServiceUnavailable, "unavailable",
			fmt.Sprintf("streamgen: store %q partition %d: its owner %s does not answer: %v", d.name, p, host.Addr, err))
		return
	}
	for _, k := range []string{"Content-Type", "Retry-After"} {
		if v := hdr.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	w.Header().Set(OwnerHeader, host.Addr)
	w.WriteHeader(status)
	w.Write(body)
}

// get sends a forwarded GET.
func (h *handler) get(ctx context.Context, u string) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set(ForwardedHeader, "1")
	httpsec.SetBearer(req, h.cfg.token)
	resp, err := h.cfg.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, body, nil
}

// scan answers ranges and fetch-alls: each partition read where it runs,
// the parts gathered and sorted here.
func (h *handler) scan(w http.ResponseWriter, r *http.Request) {
	d := h.store(w, r)
	if d == nil {
		return
	}
	vals := r.URL.Query()
	q := query{}
	var err error
	if d.kind == sgstream.KeyValueStore {
		for _, b := range []struct {
			name string
			dst  *[]byte
		}{{"from", &q.from}, {"to", &q.to}} {
			if !vals.Has(b.name) {
				continue
			}
			if *b.dst, err = d.keyFromText(vals.Get(b.name)); err != nil {
				h.fail(w, err)
				return
			}
		}
	} else if q.timeFrom, q.timeTo, err = timeBounds(vals); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	info, err := h.src.StoreInfo(d.name)
	if err != nil {
		h.fail(w, err)
		return
	}
	forwarded := r.Header.Get(ForwardedHeader) != ""
	parts := partitionsOf(info)
	if forwarded && vals.Has("partitions") {
		if parts, err = parsePartitions(vals.Get("partitions")); err != nil {
			writeError(w, http.StatusBadRequest, "bad_request", err.Error())
			return
		}
	}
	var results []result
	remote := map[string][]int32{}
	for _, p := range parts {
		es, err := d.read(r.Context(), h.src, p, q)
		if errors.Is(err, ErrNotLocal) && !forwarded {
			host, oerr := h.src.Owner(r.Context(), d.name, p)
			switch {
			case oerr != nil:
				err = oerr
			case host.Self || host.Addr == "":
				err = fmt.Errorf("%w: store %q partition %d is restoring or on an instance without --query-addr", ErrUnavailable, d.name, p)
			default:
				remote[host.Addr] = append(remote[host.Addr], p)
				continue
			}
		} else if errors.Is(err, ErrNotLocal) {
			err = fmt.Errorf("%w: store %q partition %d is moving to another instance", ErrUnavailable, d.name, p)
		}
		if err != nil {
			h.fail(w, err)
			return
		}
		for _, e := range es {
			res, err := d.render(e, true)
			if err != nil {
				h.fail(w, err)
				return
			}
			results = append(results, res)
		}
	}
	addrs := make([]string, 0, len(remote))
	for a := range remote {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	for _, addr := range addrs {
		rs, err := h.gather(r, d, addr, remote[addr])
		if err != nil {
			h.fail(w, err)
			return
		}
		results = append(results, rs...)
	}
	sortResults(d.kind, results)
	writeJSON(w, http.StatusOK, listBody{Store: d.name, Results: append([]result{}, results...)})
}

// gather asks the instance at addr for its partitions of a scan.
func (h *handler) gather(r *http.Request, d *storeDef, addr string, parts []int32) ([]result, error) {
	vals := r.URL.Query()
	ps := make([]string, len(parts))
	for i, p := range parts {
		ps[i] = strconv.Itoa(int(p))
	}
	vals.Set("partitions", strings.Join(ps, ","))
	u := h.cfg.scheme + "://" + addr + r.URL.Path + "?" + vals.Encode()
	status, _, body, err := h.get(r.Context(), u)
	if err != nil {
		return nil, fmt.Errorf("%w: store %q: instance %s does not answer: %v", ErrUnavailable, d.name, addr, err)
	}
	if status != http.StatusOK {
		var eb errorBody
		json.Unmarshal(body, &eb)
		if status == http.StatusServiceUnavailable {
			return nil, fmt.Errorf("%w: instance %s: %s", ErrUnavailable, addr, eb.Error)
		}
		return nil, fmt.Errorf("streamgen: store %q: instance %s answered %d: %s", d.name, addr, status, eb.Error)
	}
	var lb listBody
	if err := json.Unmarshal(body, &lb); err != nil {
		return nil, fmt.Errorf("streamgen: store %q: instance %s: %w", d.name, addr, err)
	}
	for i := range lb.Results {
		kb, err := d.keyFromJSON(lb.Results[i].Key)
		if err != nil {
			return nil, fmt.Errorf("streamgen: store %q: instance %s: %w", d.name, addr, err)
		}
		lb.Results[i].sort = kb
	}
	return lb.Results, nil
}

func parsePartitions(s string) ([]int32, error) {
	var out []int32
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("streamgen: partitions %q: want comma-separated partition numbers", s)
		}
		out = append(out, int32(p))
	}
	return out, nil
}

// sortResults orders gathered results as one store would: key-value by
// key bytes, windows by start then key, sessions by end, key, start.
func sortResults(kind sgstream.StoreKind, rs []result) {
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		switch kind {
		case sgstream.WindowStore:
			if val(a.Start) != val(b.Start) {
				return val(a.Start) < val(b.Start)
			}
		case sgstream.SessionStore:
			if val(a.End) != val(b.End) {
				return val(a.End) < val(b.End)
			}
			if c := bytes.Compare(a.sort, b.sort); c != 0 {
				return c < 0
			}
			return val(a.Start) < val(b.Start)
		}
		return bytes.Compare(a.sort, b.sort) < 0
	})
}
