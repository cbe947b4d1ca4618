package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/serdes"
	"github.com/streamgen/streamgen/spec"
)

// sideSchemas give the schema text a topic side in a registry format
// registers, as the generated app does: the format's generator function.
var sideSchemas = map[spec.Format]func(prog *spec.Program, t *spec.Topic, ty *spec.Type) (string, sr.SchemaType, error){
	spec.FormatJSONSchema: func(_ *spec.Program, t *spec.Topic, ty *spec.Type) (string, sr.SchemaType, error) {
		s, err := gen.RecordJSONSchema(ty.Record, t.JSONTimestamps)
		return s, sr.TypeJSON, err
	},
	spec.FormatProtobuf: func(prog *spec.Program, _ *spec.Topic, ty *spec.Type) (string, sr.SchemaType, error) {
		return gen.RecordProto(ty.Record, prog.Package), sr.TypeProtobuf, nil
	},
	spec.FormatAvro: func(_ *spec.Program, _ *spec.Topic, ty *spec.Type) (string, sr.SchemaType, error) {
		s, err := gen.AvroSideSchema(ty)
		return s, sr.TypeAvro, err
	},
}

// registrySide is one topic side in a registry format.
type registrySide struct {
	prog    *spec.Program
	t       *spec.Topic
	key     bool
	ty      *spec.Type
	subject serdes.Subject
}

// String names the side and its subject, as the app's start errors do.
func (s registrySide) String() string { return s.subject.String() }

// pos is where a refusal is reported: the record's line for a record
// side (the schema is the record's), else the topic's.
func (s registrySide) pos() spec.Pos {
	if s.ty.Kind == spec.KindRecord {
		return s.ty.Record.Pos
	}
	return s.t.Pos
}

// registrySides are the spec's topic sides in a registry format.
func registrySides(prog *spec.Program) []registrySide {
	var out []registrySide
	for _, t := range prog.Topics {
		for _, key := range []bool{true, false} {
			f, ty := t.ValueFormat, t.Value
			if key {
				f, ty = t.KeyFormat, t.Key
			}
			if !f.IsRegistry() || ty == nil {
				continue
			}
			subject := serdes.Subject{Topic: t.Name, Key: key}
			if t.SubjectStrategy == spec.SubjectRecord {
				subject.Strategy, subject.Record = serdes.RecordNameStrategy, ty.Record.SchemaName
			}
			out = append(out, registrySide{prog: prog, t: t, key: key, ty: ty, subject: subject})
		}
	}
	return out
}

// runRegistryCheck is `streamgen check -registry URL`: it asks the
// registry whether each registry-format side's schema is compatible with
// the latest version under its subject, by the subject's rule, and
// reports a refused one at its record's spec line. A subject with nothing
// registered has nothing to be compatible with. The password is the URL's
// or STREAMGEN_REGISTRY_PASSWORD (user STREAMGEN_REGISTRY_USER); neither
// is ever printed.
func runRegistryCheck(prog *spec.Program, rawURL string, stdout, stderr io.Writer) int {
	cl, shown, err := registryClient(rawURL)
	if err != nil {
		fmt.Fprintf(stderr, "streamgen: check -registry: %v\n", err)
		return ExitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	refused, failed := 0, false
	for _, s := range registrySides(prog) {
		verdict, err := checkSide(ctx, cl, s)
		p := s.pos()
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "%s:%d:%d: %s: %v\n", p.File, p.Line, p.Col, s, redactErr(err, rawURL, shown))
			failed = true
		case verdict != "":
			fmt.Fprintf(stdout, "%s:%d:%d: %s: %s\n", p.File, p.Line, p.Col, s, verdict)
			refused++
		}
	}
	switch {
	case failed:
		return ExitIO
	case refused > 0:
		fmt.Fprintf(stderr, "streamgen: check -registry: the registry at %s refuses %d schema(s)\n", shown, refused)
		return ExitProblem
	}
	return ExitOK
}

// checkSide returns why the registry refuses side s's schema, or "".
func checkSide(ctx context.Context, cl *sr.Client, s registrySide) (string, error) {
	f := s.t.ValueFormat
	if s.key {
		f = s.t.KeyFormat
	}
	schemaOf := sideSchemas[f]
	if schemaOf == nil {
		return "", fmt.Errorf("the %s format is not built yet in this version", f)
	}
	text, typ, err := schemaOf(s.prog, s.t, s.ty)
	if err != nil {
		return "", err
	}
	res, err := cl.CheckCompatibility(sr.WithParams(ctx, sr.Verbose), s.subject.Name(), -1, sr.Schema{Schema: text, Type: typ})
	var re *sr.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
		return "", nil // nothing registered yet: any schema is the first
	}
	if err != nil {
		return "", err
	}
	if res.Is {
		return "", nil
	}
	level := ""
	if cr := cl.Compatibility(sr.WithParams(ctx, sr.DefaultToGlobal), s.subject.Name()); len(cr) == 1 && cr[0].Err == nil {
		level = cr[0].Level.String() + " "
	}
	msg := fmt.Sprintf("the registry's %scompatibility rule refuses this record's schema against the latest registered version", level)
	if len(res.Messages) > 0 {
		msg += ": " + strings.Join(res.Messages, "; ")
	}
	return msg, nil
}

// registryClient is a pkg/sr client for rawURL, and the URL as it may be
// shown (without credentials).
func registryClient(rawURL string) (*sr.Client, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", fmt.Errorf("registry URL: want http(s)://host:port/path")
	}
	user, pass := os.Getenv("STREAMGEN_REGISTRY_USER"), os.Getenv("STREAMGEN_REGISTRY_PASSWORD")
	if u.User != nil {
		user = u.User.Username()
		if p, ok := u.User.Password(); ok {
			pass = p
		}
		u.User = nil
	}
	opts := []sr.ClientOpt{sr.URLs(u.String()), sr.UserAgent("streamgen-check"), sr.HTTPClient(&http.Client{Timeout: 30 * time.Second})}
	if user != "" {
		opts = append(opts, sr.BasicAuth(user, pass))
	}
	cl, err := sr.NewClient(opts...)
	return cl, u.String(), err
}

// redactErr is err's text with rawURL's credentials, should an error
// ever quote the URL as given, replaced by the shown URL.
func redactErr(err error, rawURL, shown string) string {
	return strings.ReplaceAll(err.Error(), rawURL, shown)
}
