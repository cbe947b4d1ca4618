// Package sgregistry is the schema registry client of streamgen's registry
// formats (avro, protobuf, jsonschema; docs/formats.md "Schema registry"):
// serdes.Registry over franz-go's pkg/sr, the Confluent REST API, and an
// in-memory registry for the test driver, replay and --embedded. Both
// frame records with pkg/sr's Confluent header.
package sgregistry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/streamgen/streamgen/serdes"
)

// header is the Confluent wire format (magic byte, id, message indexes).
var header sr.ConfluentHeader

// appendHeader and cutHeader are the framing both registries share.
func appendHeader(dst []byte, id int, index []int) []byte {
	dst, _ = header.AppendEncode(dst, id, index) // never fails
	return dst
}

func cutHeader(b []byte, protobuf bool) (int, []int, []byte, error) {
	id, rest, err := header.DecodeID(b)
	if err != nil {
		if len(b) > 0 && b[0] != 0 {
			return 0, nil, nil, fmt.Errorf("magic byte %#02x, want 0x00 (not written by a schema registry serializer)", b[0])
		}
		return 0, nil, nil, fmt.Errorf("%d bytes, shorter than the 5-byte header", len(b))
	}
	if !protobuf {
		return id, nil, rest, nil
	}
	index, rest, err := header.DecodeIndex(rest, 64)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("schema id %d: bad Protobuf message indexes: %v", id, err)
	}
	return id, index, rest, nil
}

// Config is how to reach a registry. Password and the URL's user
// information are credentials: they never appear in an error or a log.
type Config struct {
	URL      string
	User     string
	Password string
	// TLS, when set, is the client's TLS configuration (CA, client
	// certificate) for an https URL.
	TLS *tls.Config
	// Timeout bounds each request; 0 means 15 s.
	Timeout time.Duration
}

// Client is a serdes.Registry on a real registry.
type Client struct {
	cl  *sr.Client
	url string // redacted, for errors

	mu   sync.Mutex
	byID map[int]serdes.Schema
}

// New returns a client for the registry cfg names. It does not connect:
// the first lookup does, when the app binds its serdes.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("schema registry URL %q: want http(s)://host:port/path", Redact(cfg.URL))
	}
	user, pass := cfg.User, cfg.Password
	if u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
		u.User = nil
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = 15 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.TLS
	opts := []sr.ClientOpt{sr.URLs(u.String()), sr.HTTPClient(&http.Client{Transport: tr, Timeout: timeout}), sr.UserAgent("streamgen")}
	if user != "" {
		opts = append(opts, sr.BasicAuth(user, pass))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("schema registry %s: %v", u.Redacted(), err)
	}
	return &Client{cl: cl, url: u.Redacted(), byID: map[int]serdes.Schema{}}, nil
}

// Redact is raw with the password of its user information replaced, for
// errors and logs.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	return u.String()
}

// SR is the underlying pkg/sr client, for compatibility checks.
func (c *Client) SR() *sr.Client { return c.cl }

// URL is the registry's URL without credentials.
func (c *Client) URL() string { return c.url }

// SchemaID implements serdes.Registry.
func (c *Client) SchemaID(ctx context.Context, subject string, s serdes.Schema, register bool) (int, error) {
	want := sr.Schema{Schema: s.Text, Type: schemaType(s.Type)}
	if register {
		id, err := c.cl.RegisterSchema(ctx, subject, want, -1, -1)
		if err != nil {
			return 0, c.explain(err, "registering the schema")
		}
		return id, nil
	}
	ss, err := c.cl.LookupSchema(ctx, subject, want)
	if err != nil {
		if isNotFound(err) {
			return 0, fmt.Errorf("the registry at %s does not hold this schema under the subject (register it, or run with --registry-auto-register): %w", c.url, err)
		}
		return 0, c.explain(err, "looking the schema up")
	}
	return ss.ID, nil
}

// SchemaByID implements serdes.Registry, cached per id (ids are immutable).
func (c *Client) SchemaByID(ctx context.Context, id int) (serdes.Schema, error) {
	c.mu.Lock()
	s, ok := c.byID[id]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	got, err := c.cl.SchemaByID(ctx, id)
	if err != nil {
		if isNotFound(err) {
			return serdes.Schema{}, fmt.Errorf("unknown to the registry at %s", c.url)
		}
		return serdes.Schema{}, c.explain(err, "fetching the writer's schema")
	}
	s = serdes.Schema{Type: fromType(got.Type), Text: got.Schema}
	c.mu.Lock()
	c.byID[id] = s
	c.mu.Unlock()
	return s, nil
}

// AppendHeader implements serdes.Registry.
func (c *Client) AppendHeader(dst []byte, id int, index []int) []byte {
	return appendHeader(dst, id, index)
}

// CutHeader implements serdes.Registry.
func (c *Client) CutHeader(b []byte, protobuf bool) (int, []int, []byte, error) {
	return cutHeader(b, protobuf)
}

// explain says what failed against which registry. pkg/sr's errors name
// the request URL, which holds no credentials (they travel in headers).
func (c *Client) explain(err error, doing string) error {
	var re *sr.ResponseError
	if errors.As(err, &re) {
		return fmt.Errorf("schema registry %s: %s: HTTP %d: %s", c.url, doing, re.StatusCode, re.Message)
	}
	return fmt.Errorf("schema registry %s unreachable while %s: %w", c.url, doing, err)
}

func isNotFound(err error) bool {
	var re *sr.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound
}

// srTypes are pkg/sr's names of the schema types.
var srTypes = map[serdes.SchemaType]sr.SchemaType{
	serdes.SchemaAvro: sr.TypeAvro, serdes.SchemaProtobuf: sr.TypeProtobuf, serdes.SchemaJSON: sr.TypeJSON,
}

func schemaType(t serdes.SchemaType) sr.SchemaType { return srTypes[t] }

// fromType is schemaType's inverse.
func fromType(t sr.SchemaType) serdes.SchemaType {
	for st, s := range srTypes {
		if s == t {
			return st
		}
	}
	return serdes.SchemaAvro
}

var _ serdes.Registry = (*Client)(nil)
