package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamgen/streamgen/internal/certtest"
	"github.com/streamgen/streamgen/internal/kafkatest"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestSecureBrokerTLSAndSCRAM runs the deadletter example end to end on a
// broker of its own whose listener is SASL_SSL with SCRAM-SHA-512: TLS
// verified against the broker's CA (--tls-ca), SCRAM with the password in a
// file. What it commits must be what replay computes. Then it checks the
// failures an operator meets: a wrong password and an untrusted
// certificate each stop the application with an error that says so, and no
// password, right or wrong, ever appears on stdout or stderr (debug logs
// included, franz-go's among them).
func TestSecureBrokerTLSAndSCRAM(t *testing.T) {
	b := kafkatest.NewSecureBroker(t)
	bin := buildExample(t, "deadletter")
	password := b.Password()

	// Topics through the PLAINTEXT listener, as an administrator would.
	adm := kadm.NewClient(b.Client())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for name, parts := range declaredTopics(t, "deadletter") {
		if _, err := adm.CreateTopic(ctx, parts, 1, kafkatest.Retained(), name); err != nil {
			t.Fatalf("creating %q: %v", name, err)
		}
	}

	input, err := filepath.Abs(filepath.Join("testdata", "deadletter.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := parseOutput(t, "replay", replay(t, bin, input, 1))
	secure := []string{"--brokers", b.SecureAddr, "--tls-ca", b.CAFile, "--sasl-mechanism", "SCRAM-SHA-512",
		"--sasl-user", b.User, "--log-level", "debug"}
	args := append([]string{"run", "--application-id", uniqueID("secure"), "--state-dir", t.TempDir(),
		"--guarantee", "exactly_once_v2", "--cache-bytes", "0", "--input", input,
		"--print", "large-payments,payments-dlq", "--until-idle", "3s", "--sasl-password-file", b.PasswordFile}, secure...)
	p := startProc(t, "secure", bin, args...)
	if err := p.wait(3 * time.Minute); err != nil {
		t.Fatalf("run over SASL_SSL: %v", err)
	}
	got := parseOutput(t, "run --print", p.output())
	if d := diffSequences(want, got); d != "" {
		t.Fatalf("run over SASL_SSL differs from replay: %s", d)
	}
	if st := p.logsWith("starting"); len(st) != 1 || st[0].Attrs["tls"] != true || st[0].str("sasl_mechanism") != "SCRAM-SHA-512" {
		t.Fatalf("the start log does not say TLS and SCRAM: %+v", st)
	}
	p.mu.Lock()
	all := p.stdout.String() + strings.Join(p.stderr, "\n")
	p.mu.Unlock()
	if strings.Contains(all, password) {
		t.Fatal("the SCRAM password appears in the output of run")
	}
	t.Logf("run over SASL_SSL with SCRAM-SHA-512: %d records, as replay; %d bytes of debug output without the password", len(got), len(all))

	// A wrong password, given the way the docs recommend (the variable).
	wrong := "wrong-" + password[:8] + "-pw"
	out, code := runFailing(t, bin, []string{"STREAMGEN_SASL_PASSWORD=" + wrong},
		append([]string{"run", "--application-id", uniqueID("wrongpw"), "--state-dir", t.TempDir()}, secure...)...)
	if code != 1 || !strings.Contains(out, "SASL_AUTHENTICATION_FAILED") || !strings.Contains(out, "--sasl-user") {
		t.Fatalf("wrong password: exit %d, want 1 and an error naming the authentication failure and what to check:\n%s", code, lastLines(out, 10))
	}
	if strings.Contains(out, wrong) || strings.Contains(out, password) {
		t.Fatal("a password appears in the output of the failed run")
	}
	t.Logf("wrong password: %s", lastLines(out, 1))

	// A CA that did not sign the broker's certificate.
	other := certtest.New(t, "not-the-brokers").CA
	out, code = runFailing(t, bin, nil, "run", "--application-id", uniqueID("badca"), "--state-dir", t.TempDir(),
		"--brokers", b.SecureAddr, "--tls-ca", other, "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", b.User,
		"--sasl-password-file", b.PasswordFile)
	if code != 1 || !strings.Contains(out, "certificate signed by unknown authority") {
		t.Fatalf("untrusted certificate: exit %d, want 1 and an x509 error:\n%s", code, lastLines(out, 10))
	}
	if strings.Contains(out, password) {
		t.Fatal("the password appears in the output of the failed run")
	}
	t.Logf("untrusted certificate: %s", lastLines(out, 1))
}

// runFailing runs bin with extra environment and returns its combined
// output and exit code; it must end on its own within two minutes.
func runFailing(t *testing.T, bin string, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not stop by itself within 2 minutes:\n%s", filepath.Base(bin), args[:3], lastLines(out.String(), 20))
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
