package sgrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamgen/streamgen/internal/certtest"
)

// TestExplainSecurityError checks the hints added to a secured cluster's
// answers: they name the flags to check, keep errors.Is working, and never
// carry the password.
func TestExplainSecurityError(t *testing.T) {
	f := &connFlags{saslUser: "app", saslMech: "SCRAM-SHA-512", saslPass: "s3cret-pw"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("streamgen: connecting to b:9093: %w", kerr.SaslAuthenticationFailed), "check --sasl-user"},
		{fmt.Errorf("streamgen: connecting to b:9093: %w", kerr.UnsupportedSaslMechanism), "does not offer --sasl-mechanism SCRAM-SHA-512"},
		{errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority"), "--tls-ca must name"},
		{errors.New("x509: certificate is valid for 10.0.0.1, not 127.0.0.1"), "does not name the address in --brokers"},
	} {
		got := explainSecurityError(c.err, f)
		if !errors.Is(got, c.err) || !strings.Contains(got.Error(), c.want) || strings.Contains(got.Error(), f.saslPass) {
			t.Errorf("explain(%v) = %v, want it to wrap the error and say %q", c.err, got, c.want)
		}
	}
	other := errors.New("streamgen: something else")
	if got := explainSecurityError(other, f); got != other {
		t.Errorf("explain(%v) = %v, want it unchanged", other, got)
	}
}

// The HTTP endpoints' flags: a CA without a certificate, or a key without
// its certificate, is refused naming the flags; a full set loads.
func TestHTTPSecurityFlags(t *testing.T) {
	files := certtest.New(t, "http")
	for _, tc := range []struct {
		q    queryFlags
		want string
	}{
		{queryFlags{tlsCA: files.CA}, "--http-tls-ca needs --http-tls-cert"},
		{queryFlags{tlsKey: files.Key}, "needs both a certificate and its key"},
		{queryFlags{tlsClientCA: files.CA}, "a client CA needs the server's own certificate"},
		{queryFlags{tokenFile: filepath.Join(t.TempDir(), "missing")}, "--http-token-file: reading token file"},
	} {
		if _, err := tc.q.security(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.q, err, tc.want)
		}
	}
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte("t0ken\n"), 0o600)
	sec, err := (&queryFlags{tlsCert: files.Cert, tlsKey: files.Key, tlsClientCA: files.CA, tlsCA: files.CA, tokenFile: tok}).security()
	if err != nil {
		t.Fatal(err)
	}
	if sec.TLS == nil || sec.TLS.ClientCAs == nil || sec.ForwardTLS == nil || len(sec.ForwardTLS.Certificates) != 1 || sec.Token != "t0ken" || sec.Scheme() != "https" {
		t.Errorf("security() = %+v", sec)
	}
}
