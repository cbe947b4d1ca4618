package sgrun

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// explainSecurityError adds what to check to the errors a secured cluster
// answers a misconfigured client with: Kafka's and Go's texts say what
// failed but not which flag is at fault. The hint names flags only, never
// their values: a password must not reach a terminal or a log.
func explainSecurityError(err error, f *connFlags) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed) || strings.Contains(msg, "SASL_AUTHENTICATION_FAILED"):
		return fmt.Errorf("%w\n\n\tthe broker rejected the credentials of user %q (%s): check --sasl-user, the password "+
			"(STREAMGEN_SASL_PASSWORD or --sasl-password-file) and --sasl-mechanism", err, f.saslUser, f.saslMech)
	case errors.Is(err, kerr.UnsupportedSaslMechanism) || strings.Contains(msg, "UNSUPPORTED_SASL_MECHANISM"):
		return fmt.Errorf("%w\n\n\tthe broker does not offer --sasl-mechanism %s on this listener", err, f.saslMech)
	case strings.Contains(msg, "x509: certificate signed by unknown authority"):
		return fmt.Errorf("%w\n\n\t--tls-ca must name the PEM file of the CA that signed the broker's certificate", err)
	case strings.Contains(msg, "x509: certificate is valid for") || strings.Contains(msg, "x509: cannot validate certificate"):
		return fmt.Errorf("%w\n\n\tthe broker's certificate does not name the address in --brokers: use the host name it was issued for", err)
	}
	return err
}
