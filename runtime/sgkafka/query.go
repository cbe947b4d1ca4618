package sgkafka

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/sgquery"
	"github.com/streamgen/streamgen/runtime/sgstate"
	"github.com/twmb/franz-go/pkg/kadm"
)

// Interactive queries (package sgquery): the engine is a sgquery.Source.
//
// Reads are made safe by locking, not by reading an older copy. Every task
// has a mutex (task.qmu) that its worker holds while it processes a batch
// of records, punctuates, flushes the record cache, commits or closes the
// task; a query takes it for the duration of one read. Kafka Streams reads
// the live store from the query's thread (RocksDB and its caching layer are
// thread-safe); our stores are not safe for concurrent use, so the query
// excludes the worker instead. The alternative, reading only committed
// state, would need a concurrent read path in every store and would lag by
// a commit interval (30 s at least once), which is not what a user of
// interactive queries expects. The lock is per task, so a query waits at
// most for one batch of that task, and the worker never holds it across a
// poll, a transaction commit or a restoration.
//
// Owners are found as Kafka Streams finds them, from the group's assignment
// and the query address each member advertises in its subscription user
// data (taskBalancer.JoinGroupMetadata): where Kafka Streams' leader sends
// the whole map to every member, an instance here asks the group
// coordinator (DescribeGroups), which holds every member's metadata and
// assignment, and caches the answer for the group generation.

// memberUserData is the user data of a worker's group subscription.
type memberUserData struct {
	// QueryAddr is the instance's advertised query address (host:port).
	QueryAddr string `json:"query_addr,omitempty"`
	// Instance names the member's process: standbys go to other instances
	// than their active task's (balancer.go).
	Instance string `json:"instance,omitempty"`
	// Rack is the instance's rack (Config.Rack), for standby placement.
	Rack string `json:"rack,omitempty"`
	// Standby lists the standby tasks the member holds now, State the tasks
	// its instance has local state of ("0_1"): the assignor keeps standbys
	// where they are and moves a task where a copy of its state is.
	Standby []string `json:"standby,omitempty"`
	State   []string `json:"state,omitempty"`
	// Offsets is the changelog offset sum of each task copy the member
	// holds, standby or left in its state directory (Kafka Streams'
	// task offset sums), for the leader's warm-up decisions (warmup.go).
	Offsets map[string]int64 `json:"offsets,omitempty"`
}

// encode is the JSON of u, nil when it is empty (as older members send).
func (u memberUserData) encode() []byte {
	if u.QueryAddr == "" && u.Instance == "" && u.Rack == "" && len(u.Standby) == 0 && len(u.State) == 0 && len(u.Offsets) == 0 {
		return nil
	}
	b, _ := json.Marshal(u)
	return b
}

func decodeUserData(b []byte) memberUserData {
	var u memberUserData
	if len(b) > 0 {
		json.Unmarshal(b, &u) // user data of another version or tool: no address
	}
	return u
}

// iqState is the engine's interactive-query state.
type iqState struct {
	// tasks holds the running (restored) tasks of this instance.
	tasks sync.Map // engine.TaskID → *task

	mu     sync.Mutex // serialises route refreshes
	routes *routeTable
}

// routeTable is the group's assignment as the coordinator described it.
type routeTable struct {
	gen int32
	at  time.Time
	// owners maps topic → partition → the member running it.
	owners map[string]map[int32]routeOwner
}

type routeOwner struct {
	addr     string
	memberID string
}

// routeTTL bounds how long a route table is trusted within one generation
// (a member's metadata can change without a new generation under static
// membership).
const routeTTL = 30 * time.Second

// registerTask makes a restored task visible to queries.
func (e *Engine) registerTask(tk *task) { e.iq.tasks.Store(tk.id, tk) }

// punctuate, flushCaches, commitState and close are the task operations
// that change its stores, under the task's query lock.
func (tk *task) punctuate() error {
	tk.qmu.Lock()
	defer tk.qmu.Unlock()
	return tk.t.PunctuateWallClock()
}

func (tk *task) flushCaches() error {
	tk.qmu.Lock()
	defer tk.qmu.Unlock()
	return tk.t.FlushCaches()
}

func (tk *task) commitState(cp map[string]int64) error {
	tk.qmu.Lock()
	defer tk.qmu.Unlock()
	return tk.t.Commit(cp)
}

func (tk *task) close() error {
	tk.w.e.iq.tasks.CompareAndDelete(tk.id, tk)
	tk.qmu.Lock()
	defer tk.qmu.Unlock()
	tk.saveOffsets()
	return tk.t.Close()
}

// storeSub is the sub-topology whose tasks hold store.
func (e *Engine) storeSub(store string) (*engine.SubTopology, error) {
	if e.tp.Store(store) != nil {
		for _, s := range e.tp.SubTopologies() {
			for _, name := range s.Stores {
				if name == store {
					return s, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("%w %q: the topology has no such store", sgquery.ErrUnknownStore, store)
}

// set up reports whether setup finished (partition counts and the admin
// client are set), which the state's atomic store publishes.
func (e *Engine) setUp() bool {
	switch e.State() {
	case Rebalancing, Running, PendingShutdown:
		return true
	}
	return false
}

func (e *Engine) notServing() error {
	return fmt.Errorf("%w: the application is %s", sgquery.ErrUnavailable, e.State())
}

// StoreInfo implements sgquery.Source.
func (e *Engine) StoreInfo(store string) (sgquery.StoreInfo, error) {
	sub, err := e.storeSub(store)
	if err != nil {
		return sgquery.StoreInfo{}, err
	}
	info := sgquery.StoreInfo{Kind: e.tp.Store(store).Kind, Global: e.tp.IsGlobal(sub)}
	if info.Global {
		return info, nil
	}
	if !e.setUp() {
		return info, e.notServing()
	}
	info.Partitions = e.taskParts[sub.ID]
	return info, nil
}

// ReadLocal implements sgquery.Source.
func (e *Engine) ReadLocal(ctx context.Context, store string, partition int32, fn func(sgstate.Store) error) error {
	sub, err := e.storeSub(store)
	if err != nil {
		return err
	}
	if e.tp.IsGlobal(sub) {
		// e.global is set before the first worker starts, which is
		// before the engine was ever RUNNING.
		if !e.runningSeen.Load() || !e.setUp() {
			return e.notServing()
		}
		s, err := e.globalStore(store)
		if err != nil {
			return err
		}
		return fn(s)
	}
	if !e.setUp() {
		return e.notServing()
	}
	id := engine.TaskID{Sub: sub.ID, Partition: partition}
	v, ok := e.iq.tasks.Load(id)
	if !ok {
		return fmt.Errorf("%w: store %q partition %d", sgquery.ErrNotLocal, store, partition)
	}
	tk := v.(*task)
	tk.qmu.Lock()
	defer tk.qmu.Unlock()
	if cur, ok := e.iq.tasks.Load(id); !ok || cur != tk {
		return fmt.Errorf("%w: store %q partition %d (closed while the query waited)", sgquery.ErrNotLocal, store, partition)
	}
	s, err := tk.t.Store(store)
	if err != nil {
		return err
	}
	return fn(s)
}

// ReadStandby implements sgquery.StandbySource: fn runs on this
// instance's standby copy of the store's partition, and lag is how many
// changelog offsets (records and transaction markers) the copy has not
// applied yet, from the changelog's end now.
func (e *Engine) ReadStandby(ctx context.Context, store string, partition int32, fn func(sgstate.Store) error) (lag int64, err error) {
	sub, err := e.storeSub(store)
	if err != nil {
		return 0, err
	}
	if e.tp.IsGlobal(sub) || !e.setUp() {
		return 0, fmt.Errorf("%w: store %q partition %d", sgquery.ErrNotLocal, store, partition)
	}
	id := engine.TaskID{Sub: sub.ID, Partition: partition}
	for _, w := range e.workers {
		pos, ok, err := w.standby.read(id, store, fn)
		if err != nil || !ok {
			if err != nil {
				return 0, err
			}
			continue
		}
		for topic, at := range pos {
			ends, err := kadm.NewClient(e.base).ListEndOffsets(ctx, topic)
			if err != nil {
				return 0, fmt.Errorf("%w: store %q partition %d: changelog end: %v", sgquery.ErrUnavailable, store, partition, err)
			}
			if o, ok := ends.Lookup(topic, partition); ok && o.Err == nil {
				lag += max(o.Offset-at, 0)
			}
		}
		return lag, nil
	}
	return 0, fmt.Errorf("%w: store %q partition %d: no standby here", sgquery.ErrNotLocal, store, partition)
}

// Owner implements sgquery.Source.
func (e *Engine) Owner(ctx context.Context, store string, partition int32) (sgquery.Host, error) {
	sub, err := e.storeSub(store)
	if err != nil {
		return sgquery.Host{}, err
	}
	if e.tp.IsGlobal(sub) {
		return sgquery.Host{Addr: e.cfg.QueryAddr, Self: true}, nil
	}
	if !e.setUp() {
		return sgquery.Host{}, e.notServing()
	}
	if e.cfg.GroupProtocol == ProtocolStreams {
		// The streams group's assignment is not read yet (the route
		// table reads the classic group's): only a task running here
		// answers.
		if _, ok := e.iq.tasks.Load(engine.TaskID{Sub: sub.ID, Partition: partition}); ok {
			return sgquery.Host{Addr: e.cfg.QueryAddr, Self: true}, nil
		}
		return sgquery.Host{}, fmt.Errorf("%w: store %q partition %d does not run on this instance (--group-protocol streams forwards no queries yet)", sgquery.ErrUnavailable, store, partition)
	}
	rt, err := e.routeTable(ctx)
	if err != nil {
		return sgquery.Host{}, err
	}
	o, ok := rt.owners[sub.Topics[0]][partition]
	if !ok {
		return sgquery.Host{}, fmt.Errorf("%w: no instance runs store %q partition %d now (the group is rebalancing)", sgquery.ErrUnavailable, store, partition)
	}
	self := false
	for _, id := range e.localMembers() {
		self = self || id == o.memberID
	}
	return sgquery.Host{Addr: o.addr, Self: self}, nil
}

// localMembers are the member ids of this instance's workers, and the
// group generation the first of them is in.
func (e *Engine) localMembers() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	ids := make([]string, 0, len(e.workers))
	for _, w := range e.workers {
		id, _ := w.cl.GroupMetadata()
		ids = append(ids, id)
	}
	return ids
}

func (e *Engine) localGeneration() int32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.workers) == 0 {
		return -1
	}
	_, gen := e.workers[0].cl.GroupMetadata()
	return gen
}

// routeTable returns the group's assignment, described by the coordinator
// at most once per generation and routeTTL.
func (e *Engine) routeTable(ctx context.Context) (*routeTable, error) {
	e.iq.mu.Lock()
	defer e.iq.mu.Unlock()
	gen := e.localGeneration()
	if rt := e.iq.routes; rt != nil && rt.gen == gen && time.Since(rt.at) < routeTTL {
		return rt, nil
	}
	g, err := e.describeGroup(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", sgquery.ErrUnavailable, err)
	}
	if g.State != "Stable" {
		return nil, fmt.Errorf("%w: group %q is %s", sgquery.ErrUnavailable, e.cfg.ApplicationID, g.State)
	}
	rt := &routeTable{gen: gen, at: time.Now(), owners: map[string]map[int32]routeOwner{}}
	for _, m := range g.Members {
		o := routeOwner{memberID: m.MemberID}
		if meta, ok := m.Join.AsConsumer(); ok {
			o.addr = decodeUserData(meta.UserData).QueryAddr
		}
		a, ok := m.Assigned.AsConsumer()
		if !ok {
			continue
		}
		for _, t := range a.Topics {
			ps := rt.owners[t.Topic]
			if ps == nil {
				ps = map[int32]routeOwner{}
				rt.owners[t.Topic] = ps
			}
			for _, p := range t.Partitions {
				ps[p] = o
			}
		}
	}
	e.iq.routes = rt
	return rt, nil
}

// QueryServer is an HTTP endpoint serving a running engine's interactive
// queries (package sgquery's handler), the one behind `run --query-addr`.
type QueryServer struct {
	ln         net.Listener
	advertised string
	redirect   bool
	sec        HTTPSecurity
	log        *slog.Logger
	srv        *http.Server
	done       chan struct{}
}

// ListenQueries binds the query endpoint on addr, before the engine exists,
// so the address it advertises to the group (Config.QueryAddr, from Addr)
// has the real port (:0 picks one). advertise is the host:port other
// instances reach it at (default: addr, with this host's name for an
// unspecified host); redirect answers keys held elsewhere with a 307
// instead of forwarding; sec secures the endpoint and the requests it
// forwards. It returns nil for an empty addr. Errors name the run
// command's flags, which set these.
func ListenQueries(addr, advertise string, redirect bool, sec HTTPSecurity, logger *slog.Logger) (*QueryServer, error) {
	if addr == "" {
		if advertise != "" {
			return nil, fmt.Errorf("streamgen: run: --advertise-addr needs --query-addr")
		}
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("streamgen: run: --query-addr: %w", err)
	}
	adv := advertise
	if adv == "" {
		host, _, _ := net.SplitHostPort(addr)
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			if host, err = os.Hostname(); err != nil {
				ln.Close()
				return nil, fmt.Errorf("streamgen: run: --query-addr %s listens on every interface: set --advertise-addr (host name: %v)", addr, err)
			}
		}
		adv = net.JoinHostPort(host, port)
	} else if _, _, err := net.SplitHostPort(adv); err != nil {
		ln.Close()
		return nil, fmt.Errorf("streamgen: run: --advertise-addr %q: want host:port", adv)
	}
	return &QueryServer{ln: sec.listener(ln), advertised: adv, redirect: redirect, sec: sec, log: logger}, nil
}

// HTTPSecurity secures the query and metrics endpoints: TLS with a server
// certificate (and, when TLS.ClientCAs is set, client certificates
// required), and a bearer token every request must carry. Queries one
// instance forwards to another use the same: https with ForwardTLS as the
// client's settings, and the token. The zero value serves plain HTTP to
// anyone who reaches the port.
type HTTPSecurity struct {
	TLS        *tls.Config
	ForwardTLS *tls.Config
	Token      string
}

// listener wraps ln in TLS when the endpoints serve it.
func (sec HTTPSecurity) listener(ln net.Listener) net.Listener {
	if sec.TLS == nil {
		return ln
	}
	return tls.NewListener(ln, sec.TLS)
}

// Scheme is the URL scheme of the endpoints.
func (sec HTTPSecurity) Scheme() string {
	if sec.TLS == nil {
		return "http"
	}
	return "https"
}

// Addr is the advertised address ("" for a nil server).
func (s *QueryServer) Addr() string {
	if s == nil {
		return ""
	}
	return s.advertised
}

// Start serves stores from e (nothing for a nil server).
func (s *QueryServer) Start(e *Engine, stores []sgquery.Store) {
	if s == nil {
		return
	}
	opts := []sgquery.Opt{sgquery.Logger(s.log), sgquery.Token(s.sec.Token)}
	if s.redirect {
		opts = append(opts, sgquery.Redirect())
	}
	if s.sec.TLS != nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = s.sec.ForwardTLS
		opts = append(opts, sgquery.ForwardHTTPS(), sgquery.ForwardClient(&http.Client{Timeout: 10 * time.Second, Transport: tr}))
	}
	names := make([]string, len(stores))
	for i, st := range stores {
		names[i] = st.Name()
	}
	h := pageHandler(e, s.sec.Token, names, sgquery.NewHandler(e, stores, opts...))
	s.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan struct{})
	s.log.Info("serving interactive queries", "listen", s.ln.Addr().String(), "advertised", s.advertised, "stores", len(stores))
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("interactive query endpoint stopped", "error", err.Error())
		}
	}()
}

// Stop closes the endpoint (or just the listener if it never started).
func (s *QueryServer) Stop() {
	if s == nil {
		return
	}
	if s.srv == nil {
		s.ln.Close()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.srv.Shutdown(ctx)
	<-s.done
}
