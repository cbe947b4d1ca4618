package sgrun

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/streamgen/streamgen/runtime/internal/engine"
	"github.com/streamgen/streamgen/runtime/internal/httpsec"
	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgkafka"
	"github.com/streamgen/streamgen/runtime/sgstream"
)

// policyFlags are the run flags overriding the spec's error policies: an
// operator facing a poison record restarts with --on-deserialization-error
// dead_letter instead of rebuilding, as a Kafka Streams operator changes
// default.deserialization.exception.handler.
type policyFlags struct {
	deser, proc, invalidTime, deadLetterTopic string
}

// addPolicyFlags registers the policy flags on fs with the spec's settings
// (or the environment's) as defaults.
func addPolicyFlags(fs *flag.FlagSet, app *sgapp.App) *policyFlags {
	p := &policyFlags{}
	fs.StringVar(&p.deser, "on-deserialization-error", env("ON_DESERIALIZATION_ERROR", app.Deserialization.String()),
		"fail, continue or dead_letter: what to do with a record whose key or value does not decode; default from the spec's on_error (env STREAMGEN_ON_DESERIALIZATION_ERROR)")
	fs.StringVar(&p.proc, "on-processing-error", env("ON_PROCESSING_ERROR", app.Processing.String()),
		"fail, continue or dead_letter: what to do with a record whose processing fails or panics; default from the spec's on_error (env STREAMGEN_ON_PROCESSING_ERROR)")
	fs.StringVar(&p.invalidTime, "invalid-timestamp", env("INVALID_TIMESTAMP", app.InvalidTime.String()),
		"fail, skip, partition_time or dead_letter: what to do with a record whose timestamp is negative; default from the spec (env STREAMGEN_INVALID_TIMESTAMP)")
	fs.StringVar(&p.deadLetterTopic, "dead-letter-topic", env("DEAD_LETTER_TOPIC", app.DeadLetterTopic),
		"topic the dead_letter policies write to; default from the spec (env STREAMGEN_DEAD_LETTER_TOPIC)")
	return p
}

// errorPolicies is the resolved form of policyFlags.
type errorPolicies struct {
	deser, proc     sgstream.Policy
	invalidTime     sgstream.TimestampPolicy
	deadLetterTopic string
}

// resolve parses the flags.
func (p *policyFlags) resolve() (errorPolicies, error) {
	var out errorPolicies
	var err error
	if out.deser, err = engine.ParsePolicy(p.deser); err != nil {
		return out, fmt.Errorf("streamgen: run: --on-deserialization-error %q: want fail, continue or dead_letter", p.deser)
	}
	if out.proc, err = engine.ParsePolicy(p.proc); err != nil {
		return out, fmt.Errorf("streamgen: run: --on-processing-error %q: want fail, continue or dead_letter", p.proc)
	}
	if out.invalidTime, err = engine.ParseTimestampPolicy(p.invalidTime); err != nil {
		return out, fmt.Errorf("streamgen: run: --invalid-timestamp %q: want fail, skip, partition_time or dead_letter", p.invalidTime)
	}
	out.deadLetterTopic = p.deadLetterTopic
	if engine.UsesDeadLetter(out.deser, out.proc, out.invalidTime) && out.deadLetterTopic == "" {
		return out, fmt.Errorf("streamgen: run: a dead_letter policy needs a dead-letter topic: set --dead-letter-topic or the spec's on_error.dead_letter_topic")
	}
	return out, nil
}

// queryFlags are the run command's interactive-query flags, with the
// security of both HTTP endpoints (queries and metrics).
type queryFlags struct {
	addr, advertise string
	redirect        bool
	// TLS of the endpoints: server certificate and key, the CA of client
	// certificates to require, the CA to trust when forwarding.
	tlsCert, tlsKey, tlsClientCA, tlsCA string
	tokenFile                           string
}

// addQueryFlags registers the interactive-query flags on fs.
func addQueryFlags(fs *flag.FlagSet) *queryFlags {
	q := &queryFlags{}
	fs.StringVar(&q.addr, "query-addr", env("QUERY_ADDR", ""), "serve interactive queries over HTTP on host:port, e.g. 127.0.0.1:8080 (env STREAMGEN_QUERY_ADDR; default: off)")
	fs.StringVar(&q.advertise, "advertise-addr", env("ADVERTISE_ADDR", ""), "host:port other instances reach this instance's query endpoint at (env STREAMGEN_ADVERTISE_ADDR; default: --query-addr, with this host's name for an unspecified host)")
	redirect, _ := strconv.ParseBool(env("QUERY_REDIRECT", "false"))
	fs.BoolVar(&q.redirect, "query-redirect", redirect, "answer a key owned by another instance with a 307 redirect instead of forwarding the request (env STREAMGEN_QUERY_REDIRECT)")
	fs.StringVar(&q.tlsCert, "http-tls-cert", env("HTTP_TLS_CERT", ""), "PEM server certificate of the query and metrics endpoints; enables https (env STREAMGEN_HTTP_TLS_CERT)")
	fs.StringVar(&q.tlsKey, "http-tls-key", env("HTTP_TLS_KEY", ""), "PEM key of --http-tls-cert (env STREAMGEN_HTTP_TLS_KEY)")
	fs.StringVar(&q.tlsClientCA, "http-tls-client-ca", env("HTTP_TLS_CLIENT_CA", ""), "require client certificates signed by these PEM CAs; forwarded queries present --http-tls-cert (env STREAMGEN_HTTP_TLS_CLIENT_CA)")
	fs.StringVar(&q.tlsCA, "http-tls-ca", env("HTTP_TLS_CA", ""), "PEM CAs to trust when forwarding queries to other instances (env STREAMGEN_HTTP_TLS_CA; default: the system's)")
	fs.StringVar(&q.tokenFile, "http-token-file", env("HTTP_TOKEN_FILE", ""), "file holding the bearer token every query and metrics request must carry, and forwarded queries send (env STREAMGEN_HTTP_TOKEN_FILE)")
	return q
}

// security loads the endpoints' TLS and token. Errors name the flags,
// never a secret.
func (q *queryFlags) security() (sgkafka.HTTPSecurity, error) {
	var sec sgkafka.HTTPSecurity
	var err error
	if sec.TLS, err = httpsec.ServerTLS(q.tlsCert, q.tlsKey, q.tlsClientCA); err != nil {
		return sec, fmt.Errorf("%w: --http-tls-cert/--http-tls-key/--http-tls-client-ca: %w", sgkafka.ErrConfig, err)
	}
	if sec.TLS == nil && q.tlsCA != "" {
		return sec, fmt.Errorf("%w: --http-tls-ca needs --http-tls-cert and --http-tls-key: instances forward over https only when they serve it", sgkafka.ErrConfig)
	}
	if sec.TLS != nil {
		if sec.ForwardTLS, err = httpsec.ClientTLS(q.tlsCA, q.tlsCert, q.tlsKey, q.tlsClientCA != ""); err != nil {
			return sec, fmt.Errorf("%w: --http-tls-ca: %w", sgkafka.ErrConfig, err)
		}
	}
	if q.tokenFile != "" {
		if sec.Token, err = httpsec.ReadToken(q.tokenFile); err != nil {
			return sec, fmt.Errorf("%w: --http-token-file: %w", sgkafka.ErrConfig, err)
		}
	}
	return sec, nil
}
