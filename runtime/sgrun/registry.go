package sgrun

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/streamgen/streamgen/runtime/sgapp"
	"github.com/streamgen/streamgen/runtime/sgkafka"
	"github.com/streamgen/streamgen/runtime/sgregistry"
	"github.com/streamgen/streamgen/serdes"
)

// registryFlags are the schema registry flags of run, produce and
// consume, for apps with topics in a registry format (avro, protobuf,
// jsonschema). Credentials follow the broker's: the password comes from
// the environment or a file, never a flag default, and neither it nor the
// URL's user information reaches a log or an error.
type registryFlags struct {
	url, user, passFile    string
	tlsCA, tlsCert, tlsKey string
	autoRegister           string // "", "true" or "false": unset means on only under --embedded
}

func addRegistryFlags(fs *flag.FlagSet, r *registryFlags) {
	fs.StringVar(&r.url, "registry", env("REGISTRY_URL", ""), "schema registry URL (Confluent API), for topics in avro, protobuf or jsonschema (env STREAMGEN_REGISTRY_URL)")
	fs.StringVar(&r.user, "registry-user", env("REGISTRY_USER", ""), "schema registry basic-auth user; the password is STREAMGEN_REGISTRY_PASSWORD or --registry-password-file (env STREAMGEN_REGISTRY_USER)")
	fs.StringVar(&r.passFile, "registry-password-file", env("REGISTRY_PASSWORD_FILE", ""), "file holding the schema registry password (env STREAMGEN_REGISTRY_PASSWORD_FILE)")
	fs.StringVar(&r.tlsCA, "registry-tls-ca", env("REGISTRY_TLS_CA", ""), "PEM file of CAs to trust for an https registry (env STREAMGEN_REGISTRY_TLS_CA)")
	fs.StringVar(&r.tlsCert, "registry-tls-cert", env("REGISTRY_TLS_CERT", ""), "PEM client certificate for the registry (env STREAMGEN_REGISTRY_TLS_CERT)")
	fs.StringVar(&r.tlsKey, "registry-tls-key", env("REGISTRY_TLS_KEY", ""), "PEM client key for the registry (env STREAMGEN_REGISTRY_TLS_KEY)")
	fs.StringVar(&r.autoRegister, "registry-auto-register", env("REGISTRY_AUTO_REGISTER", ""), "register the app's schemas instead of requiring them registered: true or false (env STREAMGEN_REGISTRY_AUTO_REGISTER; default false, true under --embedded)")
}

// bindRegistry binds the app's registry serdes before records flow: to
// the registry --registry names, or under --embedded without one to the
// in-memory registry. A side of a topic the command writes (writes says
// which) must find its schema under its subject, or register it with
// --registry-auto-register: a subject that lacks it stops the start with
// the topic and subject named, before a record is written that no reader
// could resolve. A side it only reads needs nothing up front, since
// readers fetch each writer's schema by id: its schema is looked up, for
// the decoder's fast path, but never registered, and a miss is no error.
// The returned bindWrites binds the sides of one more topic as written
// (produce, at the first line naming the topic), its error naming the
// side and the subject; nil when the app has no registry-format side.
func (c *connFlags) bindRegistry(ctx context.Context, app *sgapp.App, embedded bool, writes func(topic string) bool, log *slog.Logger) (bindWrites func(topic string) error, err error) {
	if len(app.Registry) == 0 {
		return nil, nil
	}
	register, err := c.autoRegister(embedded)
	if err != nil {
		return nil, err
	}
	var reg serdes.Registry
	switch {
	case c.registry.url != "":
		cl, err := c.registryClient()
		if err != nil {
			return nil, err
		}
		reg = cl
		if log != nil {
			log.Info("schema registry", "url", cl.URL(), "auto_register", register)
		}
	case embedded:
		reg = sgregistry.Shared()
		if log != nil {
			log.Info("schema registry in memory (--embedded without --registry)", "auto_register", register)
		}
	default:
		return nil, fmt.Errorf("%w: %s: %s is in a registry format: set --registry or STREAMGEN_REGISTRY_URL", sgkafka.ErrConfig, c.cmd, app.Registry[0].Subject())
	}
	bindWrites = func(topic string) error {
		for _, b := range app.Registry {
			if b.Subject().Topic != topic {
				continue
			}
			if err := b.BindRegistry(ctx, reg, register); err != nil {
				return err
			}
		}
		return nil
	}
	for _, b := range app.Registry {
		if !writes(b.Subject().Topic) {
			_ = b.BindRegistry(ctx, reg, false) // bound either way: it reads by id
		}
	}
	written := map[string]bool{}
	for _, b := range app.Registry {
		if t := b.Subject().Topic; writes(t) && !written[t] {
			written[t] = true
			if err := bindWrites(t); err != nil {
				return nil, fmt.Errorf("%w: %s: %w", sgkafka.ErrConfig, c.cmd, err)
			}
		}
	}
	return bindWrites, nil
}

// writesNone is the writes of bindRegistry for consume and produce,
// which write nothing up front (produce binds each topic at its first
// line).
func writesNone(string) bool { return false }

func (c *connFlags) autoRegister(embedded bool) (bool, error) {
	if c.registry.autoRegister == "" {
		return embedded, nil
	}
	v, err := strconv.ParseBool(c.registry.autoRegister)
	if err != nil {
		return false, fmt.Errorf("streamgen: %s: --registry-auto-register %q: want true or false", c.cmd, c.registry.autoRegister)
	}
	return v, nil
}

// registryClient builds the client of --registry and its credentials.
func (c *connFlags) registryClient() (*sgregistry.Client, error) {
	r := c.registry
	cfg := sgregistry.Config{URL: r.url, User: r.user, Password: os.Getenv("STREAMGEN_REGISTRY_PASSWORD")}
	if r.passFile != "" {
		b, err := os.ReadFile(r.passFile)
		if err != nil {
			return nil, fmt.Errorf("streamgen: %s: --registry-password-file: %w", c.cmd, err)
		}
		cfg.Password = strings.TrimRight(string(b), "\r\n")
	}
	if r.tlsCA != "" || r.tlsCert != "" || r.tlsKey != "" {
		tc := connFlags{cmd: c.cmd + ": registry", tlsCA: r.tlsCA, tlsCert: r.tlsCert, tlsKey: r.tlsKey}
		t, err := tc.tlsConfig()
		if err != nil {
			return nil, err
		}
		cfg.TLS = t
	}
	cl, err := sgregistry.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("streamgen: %s: %w", c.cmd, err)
	}
	return cl, nil
}
