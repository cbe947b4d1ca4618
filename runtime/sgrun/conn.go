package sgrun

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// connFlags are the broker connection flags every command that talks to
// Kafka takes (run, produce, consume): one definition, so the three read
// the same flags and STREAMGEN_* variables and refuse the same mistakes.
type connFlags struct {
	cmd                    string // the command, for error messages
	brokers                string
	tlsCA, tlsCert, tlsKey string
	saslMech, saslUser     string
	saslPass, saslPassFile string
	registry               registryFlags
}

// conn gives toolMain the connection flags of a command's flags.
func (c *connFlags) conn() *connFlags { return c }

// addConnFlags registers the connection flags of command cmd on fs.
func addConnFlags(fs *flag.FlagSet, c *connFlags, cmd string) {
	c.cmd = cmd
	fs.StringVar(&c.brokers, "brokers", env("BROKERS", ""), "comma-separated seed brokers (env STREAMGEN_BROKERS)")
	fs.StringVar(&c.tlsCA, "tls-ca", env("TLS_CA", ""), "PEM file of CAs to trust; enables TLS (env STREAMGEN_TLS_CA)")
	fs.StringVar(&c.tlsCert, "tls-cert", env("TLS_CERT", ""), "PEM client certificate; enables TLS (env STREAMGEN_TLS_CERT)")
	fs.StringVar(&c.tlsKey, "tls-key", env("TLS_KEY", ""), "PEM client key (env STREAMGEN_TLS_KEY)")
	fs.StringVar(&c.saslMech, "sasl-mechanism", env("SASL_MECHANISM", ""), "SCRAM-SHA-256, SCRAM-SHA-512 or PLAIN (env STREAMGEN_SASL_MECHANISM)")
	fs.StringVar(&c.saslUser, "sasl-user", env("SASL_USER", ""), "SASL user (env STREAMGEN_SASL_USER)")
	fs.StringVar(&c.saslPass, "sasl-password", "", "SASL password; prefer STREAMGEN_SASL_PASSWORD or --sasl-password-file (visible in ps)")
	fs.StringVar(&c.saslPassFile, "sasl-password-file", env("SASL_PASSWORD_FILE", ""), "file holding the SASL password (env STREAMGEN_SASL_PASSWORD_FILE)")
	addRegistryFlags(fs, &c.registry)
}

// finish applies what flag parsing cannot: the password's environment
// fallback (never a flag default, which -h would print) and the need for
// a broker. needBrokers is false under run --embedded.
func (c *connFlags) finish(needBrokers bool) error {
	if c.saslPass == "" {
		c.saslPass = env("SASL_PASSWORD", "")
	}
	if needBrokers && c.brokers == "" {
		hint := ""
		if c.cmd == "run" {
			hint = ", or use --embedded"
		}
		return fmt.Errorf("streamgen: %s: no brokers: set --brokers or STREAMGEN_BROKERS%s", c.cmd, hint)
	}
	return nil
}

// securityOpts turns the TLS and SASL flags into client options.
func (c *connFlags) securityOpts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if c.tlsCA != "" || c.tlsCert != "" || c.tlsKey != "" {
		cfg, err := c.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if c.saslMech != "" {
		m, err := c.saslMechanism()
		if err != nil {
			return nil, err
		}
		opts = append(opts, m)
	}
	return opts, nil
}

func (c *connFlags) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.tlsCA != "" {
		pem, err := os.ReadFile(c.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("streamgen: %s: --tls-ca: %w", c.cmd, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("streamgen: %s: --tls-ca %q: no PEM certificates found", c.cmd, c.tlsCA)
		}
		cfg.RootCAs = pool
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return nil, fmt.Errorf("streamgen: %s: --tls-cert and --tls-key go together", c.cmd)
	}
	if c.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("streamgen: %s: --tls-cert/--tls-key: %w", c.cmd, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

func (c *connFlags) saslMechanism() (kgo.Opt, error) {
	pass := c.saslPass
	if c.saslPassFile != "" {
		b, err := os.ReadFile(c.saslPassFile)
		if err != nil {
			return nil, fmt.Errorf("streamgen: %s: --sasl-password-file: %w", c.cmd, err)
		}
		pass = strings.TrimRight(string(b), "\r\n")
	}
	if c.saslUser == "" || pass == "" {
		return nil, fmt.Errorf("streamgen: %s: --sasl-mechanism %s needs --sasl-user and a password (STREAMGEN_SASL_PASSWORD or --sasl-password-file)", c.cmd, c.saslMech)
	}
	switch strings.ToUpper(c.saslMech) {
	case "PLAIN":
		return kgo.SASL(plain.Auth{User: c.saslUser, Pass: pass}.AsMechanism()), nil
	case "SCRAM-SHA-256":
		return kgo.SASL(scram.Auth{User: c.saslUser, Pass: pass}.AsSha256Mechanism()), nil
	case "SCRAM-SHA-512":
		return kgo.SASL(scram.Auth{User: c.saslUser, Pass: pass}.AsSha512Mechanism()), nil
	}
	return nil, fmt.Errorf("streamgen: %s: --sasl-mechanism %q: want SCRAM-SHA-256, SCRAM-SHA-512 or PLAIN", c.cmd, c.saslMech)
}
