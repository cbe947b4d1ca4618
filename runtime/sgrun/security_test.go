package sgrun

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
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
