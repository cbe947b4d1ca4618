package templates_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"go.yaml.in/yaml/v3"

	"github.com/streamgen/streamgen/internal/certtest"
	"github.com/streamgen/streamgen/internal/cli"
	"github.com/streamgen/streamgen/internal/textdiff"
)

var updateReplay = flag.Bool("update-replay", false, "rewrite testdata/replay.jsonl from the starter's replay output")

// TestInitProject creates a project with `streamgen init` in a temporary
// directory outside this module, depending on this checkout, and uses it
// as its README says: go mod tidy, go generate (the pinned go tool), vet,
// test, build and replay of the starter input. Then it runs the binary
// with the container command lines of the Dockerfile and the StatefulSet
// on the embedded broker: their flags must be the binary's, the readiness
// probe's request must be answered 200 once the app runs, every metric and
// label the dashboard queries must be in a scrape, and SIGTERM must end
// the app with status 0.
func TestInitProject(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a new module and runs it on the embedded broker")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "myorders")
	var out, errb bytes.Buffer
	if code := cli.Run([]string{"init", "-module", "example.com/myorders", "-replace", root, dir}, nil, &out, &errb); code != 0 {
		t.Fatalf("streamgen init: exit %d\n%s", code, errb.String())
	}
	if code := cli.Run([]string{"init", "-replace", root, dir}, nil, &out, &errb); code == 0 {
		t.Fatal("streamgen init into a non-empty directory succeeded; want a refusal")
	}
	for _, args := range [][]string{{"mod", "tidy"}, {"generate", "./..."}, {"vet", "./..."}, {"test", "./..."}, {"build", "-o", "myorders", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	exe := filepath.Join(dir, "myorders")
	checkReplay(t, dir, exe)

	k8s := statefulSet(t, filepath.Join(dir, "deploy", "kubernetes.yaml"))
	c := k8s.Spec.Template.Spec.Containers[0]
	args := expandPodName(c.Args, "myorders-0")
	ready := c.ReadinessProbe.HTTPGet.Path
	t.Run("statefulset", func(t *testing.T) {
		runStatefulSet(t, exe, args, ready, dashboardQueries(t, filepath.Join(dir, "deploy", "grafana-dashboard.json")))
	})
	t.Run("dockerfile", func(t *testing.T) {
		args, env := dockerCommand(t, filepath.Join(dir, "Dockerfile"))
		a := start(t, exe, args, env, "--embedded", "--input", filepath.Join(dir, "testdata", "input.jsonl"))
		a.ready(t, ready, func(s string) bool { return processed(s) >= 7 })
		a.stop(t)
	})
}

// checkReplay replays the starter input and compares with testdata/replay.jsonl.
func checkReplay(t *testing.T, dir, exe string) {
	t.Helper()
	in, err := os.Open(filepath.Join(dir, "testdata", "input.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command(exe, "replay", "--strict")
	cmd.Stdin = in
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	want := filepath.Join("testdata", "replay.jsonl")
	if *updateReplay {
		if err := os.WriteFile(want, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if d := textdiff.Unified(want, "replay", string(b), string(got)); d != "" {
		t.Errorf("the starter's replay output changed (-update-replay rewrites it):\n%s", d)
	}
}

// k8sObject is the part of a Kubernetes object the test reads.
type k8sObject struct {
	Kind string `yaml:"kind"`
	Spec struct {
		MaxUnavailable       int `yaml:"maxUnavailable"`
		VolumeClaimTemplates []struct {
			Metadata struct{ Name string } `yaml:"metadata"`
		} `yaml:"volumeClaimTemplates"`
		Template struct {
			Metadata struct {
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
			Spec struct {
				TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
				Containers                    []struct {
					Args           []string `yaml:"args"`
					ReadinessProbe struct {
						HTTPGet struct{ Path string } `yaml:"httpGet"`
					} `yaml:"readinessProbe"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// statefulSet decodes the manifests, checks what the StatefulSet and the
// PodDisruptionBudget must say, and returns the StatefulSet.
func statefulSet(t *testing.T, path string) k8sObject {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]k8sObject{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var o k8sObject
		if err := dec.Decode(&o); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		kinds[o.Kind] = o
	}
	ss, pdb := kinds["StatefulSet"], kinds["PodDisruptionBudget"]
	if _, ok := kinds["Service"]; !ok || pdb.Spec.MaxUnavailable != 1 || len(ss.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s: want a Service, a StatefulSet with one container and a PodDisruptionBudget with maxUnavailable 1; got %v", path, kinds)
	}
	c := ss.Spec.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--group-instance-id=$(POD_NAME)", "--query-addr=", "--metrics-addr=", "--state-dir="} {
		if !strings.Contains(args, want) {
			t.Errorf("the StatefulSet's arguments %q lack %s", args, want)
		}
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	if len(ss.Spec.VolumeClaimTemplates) != 1 || mounts[ss.Spec.VolumeClaimTemplates[0].Metadata.Name] == "" ||
		!strings.Contains(args, "--state-dir="+mounts[ss.Spec.VolumeClaimTemplates[0].Metadata.Name]) {
		t.Errorf("the state directory is not the persistent volume: args %q, mounts %+v", args, c.VolumeMounts)
	}
	for _, f := range []string{"--http-tls-cert=", "--http-tls-key=", "--http-tls-ca=", "--http-token-file="} {
		if !strings.Contains(args, f+mounts["http"]+"/") {
			t.Errorf("the StatefulSet's %s does not name a file of the http Secret's mount %q: args %q", f, mounts["http"], args)
		}
	}
	if a := ss.Spec.Template.Metadata.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] == "" {
		t.Errorf("no Prometheus scrape annotations: %v", a)
	}
	if ss.Spec.Template.Spec.TerminationGracePeriodSeconds < 30 {
		t.Errorf("terminationGracePeriodSeconds %d leaves too little time for the last commit", ss.Spec.Template.Spec.TerminationGracePeriodSeconds)
	}
	return ss
}

// expandPodName does what Kubernetes does to $(POD_NAME) in arguments.
func expandPodName(args []string, pod string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "$(POD_NAME)", pod)
	}
	return out
}

// dockerCommand returns the Dockerfile's CMD arguments and ENV settings.
func dockerCommand(t *testing.T, path string) ([]string, []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var args, env []string
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "CMD "); ok {
			if err := json.Unmarshal([]byte(rest), &args); err != nil {
				t.Fatalf("%s: CMD %s: %v", path, rest, err)
			}
		}
		if rest, ok := strings.CutPrefix(l, "ENV "); ok {
			env = append(env, rest)
		}
	}
	if len(args) == 0 || len(env) == 0 {
		t.Fatalf("%s: found CMD %q and ENV %q", path, args, env)
	}
	return args, env
}

// metricRE finds the metric names a PromQL expression names.
var metricRE = regexp.MustCompile(`\bstreamgen_[a-z_]+`)

// byRE finds the labels of by (...) clauses.
var byRE = regexp.MustCompile(`by \(([^)]*)\)`)

// dashboardQueries returns the expressions of the dashboard's panels.
func dashboardQueries(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string } `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var exprs []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	if len(exprs) < 5 {
		t.Fatalf("%s: %d queries; the decoding is broken", path, len(exprs))
	}
	return exprs
}

// freeAddr returns a 127.0.0.1 address with a port nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// httpSecrets stand in for the http Secret the StatefulSet mounts: a
// throwaway CA and certificate, and a token.
type httpSecrets struct {
	files certtest.Files
	token string
	// used is set when the command line names the Secret's files: the
	// endpoints then serve https and want the token.
	used bool
}

func newHTTPSecrets(t *testing.T) *httpSecrets {
	return &httpSecrets{files: certtest.New(t, "pod"), token: "pod-token"}
}

// file is the local file standing in for a flag's Secret file.
func (h *httpSecrets) file(flag string) string {
	h.used = true
	switch flag {
	case "--http-tls-cert":
		return h.files.Cert
	case "--http-tls-key":
		return h.files.Key
	case "--http-tls-ca":
		return h.files.CA
	}
	tok := filepath.Join(filepath.Dir(h.files.CA), "token")
	os.WriteFile(tok, []byte(h.token+"\n"), 0o600)
	return tok
}

// localArgs points the container's listeners at free local ports, its
// state directory at a temporary one and its Secret files at sec's; it
// returns the query and metrics addresses.
func localArgs(t *testing.T, args []string, sec *httpSecrets) ([]string, string, string) {
	t.Helper()
	query, metrics := freeAddr(t), freeAddr(t)
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, eq := strings.Cut(a, "=")
		if !eq && strings.HasPrefix(a, "--") && i+1 < len(args) {
			val = args[i+1]
			i++
		}
		switch name {
		case "--query-addr":
			val = query
		case "--metrics-addr":
			val = metrics
		case "--advertise-addr":
			_, port, _ := net.SplitHostPort(query)
			val = "127.0.0.1:" + port
		case "--state-dir":
			val = t.TempDir()
		case "--http-tls-cert", "--http-tls-key", "--http-tls-ca", "--http-token-file":
			val = sec.file(name)
		}
		if strings.HasPrefix(name, "--") {
			out = append(out, name+"="+val)
		} else {
			out = append(out, a)
		}
	}
	return out, query, metrics
}

// app is the binary, running with a container's command line.
type app struct {
	cmd            *exec.Cmd
	done           chan error
	stderr         bytes.Buffer
	query, metrics string
	sec            *httpSecrets
}

// start runs exe with a container's arguments (listeners and state
// directory made local) and environment, plus extra arguments.
func start(t *testing.T, exe string, args, env []string, extra ...string) *app {
	t.Helper()
	sec := newHTTPSecrets(t)
	args, query, metrics := localArgs(t, args, sec)
	a := &app{done: make(chan error, 1), query: query, metrics: metrics, sec: sec}
	a.cmd = exec.Command(exe, append(args, extra...)...)
	a.cmd.Env = append(os.Environ(), env...)
	a.cmd.Env = append(a.cmd.Env, "STREAMGEN_STATE_DIR="+t.TempDir())
	a.cmd.Stderr = &a.stderr
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { a.done <- a.cmd.Wait() }()
	return a
}

// stop sends SIGTERM, as Kubernetes does, and wants exit status 0.
func (a *app) stop(t *testing.T) {
	t.Helper()
	a.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-a.done; err != nil {
		t.Errorf("%s after SIGTERM: %v\n%s", strings.Join(a.cmd.Args, " "), err, a.stderr.String())
	}
}

// ready waits until the readiness probe's request is answered 200 and a
// scrape satisfies cond; it returns the scrape.
func (a *app) ready(t *testing.T, probe string, cond func(scrape string) bool) string {
	t.Helper()
	scrape, code := "", 0
	ok := poll(a.done, func() bool {
		if code, _ = a.get(a.query+probe, ""); code != http.StatusOK {
			return false
		}
		if a.sec.used {
			// Secured: the token is needed everywhere but the probe.
			if c, _ := a.get(a.metrics+"/metrics", ""); c != http.StatusUnauthorized {
				t.Fatalf("a scrape without the token answered %d, want 401", c)
			}
		}
		_, scrape = a.get(a.metrics+"/metrics", a.sec.token)
		return cond(scrape)
	})
	if !ok {
		t.Fatalf("%s: not ready (the probe's last answer: %d; the last scrape's records:\n%s)\n%s", strings.Join(a.cmd.Args, " "), code,
			strings.Join(regexp.MustCompile(`(?m)^streamgen_(task_processed|restored)_records_total.*$`).FindAllString(scrape, -1), "\n"), a.stderr.String())
	}
	return scrape
}

// runStatefulSet runs the StatefulSet's command line on an in-process
// Kafka: once with the starter input, then again on an empty state
// directory, so the second instance restores its store from the changelog
// and its scrape carries the restore metrics too. The dashboard is checked
// against that scrape.
func runStatefulSet(t *testing.T, exe string, args []string, probe string, queries []string) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "orders", "processed-orders", "orders-per-user"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	env := []string{"STREAMGEN_BROKERS=" + strings.Join(c.ListenAddrs(), ",")}
	first := start(t, exe, args, env, "--input", filepath.Join(filepath.Dir(exe), "testdata", "input.jsonl"))
	first.ready(t, probe, func(s string) bool { return processed(s) >= 7 })
	first.stop(t)
	second := start(t, exe, args, env)
	scrape := second.ready(t, probe, func(s string) bool { return strings.Contains(s, "streamgen_restored_records_total{") })
	second.stop(t)
	checkDashboard(t, queries, scrape)
}

// checkDashboard fails for a metric or a grouping label of the queries
// that the scrape does not have.
func checkDashboard(t *testing.T, queries []string, scrape string) {
	t.Helper()
	for _, q := range queries {
		for _, m := range metricRE.FindAllString(q, -1) {
			if !regexp.MustCompile(`(?m)^` + m + `[{ ]`).MatchString(scrape) {
				t.Errorf("the dashboard's query %q names %s, which the app does not export", q, m)
			}
		}
		for _, by := range byRE.FindAllStringSubmatch(q, -1) {
			for _, l := range strings.Split(by[1], ",") {
				l = strings.TrimSpace(l)
				if l != "instance" && l != "le" && !strings.Contains(scrape, l+`="`) {
					t.Errorf("the dashboard's query %q groups by %s, a label no exported metric has", q, l)
				}
			}
		}
	}
}

// processedRE reads the processed-records counters of a scrape.
var processedRE = regexp.MustCompile(`(?m)^streamgen_task_processed_records_total\{[^}]*\} (\d+)`)

// processed sums the processed-records counters of a scrape.
func processed(scrape string) int {
	n := 0
	for _, m := range processedRE.FindAllStringSubmatch(scrape, -1) {
		v, _ := strconv.Atoi(m[1])
		n += v
	}
	return n
}

// get returns the status and body of a GET of addr+path with the token
// (when the app is secured), or 0 when nothing answers.
func (a *app) get(addrPath, token string) (int, string) {
	url, cl := "http://"+addrPath, http.DefaultClient
	if a.sec.used {
		pool := x509.NewCertPool()
		pem, _ := os.ReadFile(a.sec.files.CA)
		pool.AppendCertsFromPEM(pem)
		url, cl = "https://"+addrPath, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := cl.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// poll calls cond until it holds, giving up when the process exits or
// after two minutes (a hung start, not a slow one).
func poll(done chan error, cond func() bool) bool {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			done <- err
			return false
		default:
		}
		if cond() {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}
