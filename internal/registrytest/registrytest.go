// Package registrytest connects streamgen's tests of the schema registry
// formats to the real registry scripts/registry.sh runs (Apicurio Registry,
// its Confluent-compatible API), as internal/kafkatest connects them to
// the real broker.
//
// The registry's URL comes from STREAMGEN_REGISTRY_URL, which
// scripts/with-kafka.sh (so `make test`) sets next to the broker's. Without
// it, tests skip on a developer machine but fail when CI=true, so a CI run
// never passes by skipping every registry test. By hand:
//
//	export $(scripts/registry.sh start)
//	go test ./golden/jsonschema/ ./internal/cli/
//	scripts/registry.sh stop
//
// One registry serves the whole run: tests use subjects of their own, or
// delete the ones they reuse (DeleteSubjects).
package registrytest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// EnvURL names the variable holding the registry's Confluent API URL.
const EnvURL = "STREAMGEN_REGISTRY_URL"

const startHint = "no schema registry (" + EnvURL + " is empty): run `make test`, " +
	"or `scripts/with-kafka.sh go test ...`, or `export $(scripts/registry.sh start)` first"

// URL returns the shared registry's URL. It skips the test when none is
// configured, or fails it when CI=true.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(startHint)
		}
		t.Skip(startHint)
	}
	return u
}

// Client is a pkg/sr client of the shared registry.
func Client(t testing.TB) *sr.Client {
	t.Helper()
	cl, err := sr.NewClient(sr.URLs(URL(t)))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// DeleteSubjects removes subjects from the registry for good (a soft
// delete, then a permanent one), so a test starts from a registry that
// has never seen them. Subjects that do not exist are no error.
func DeleteSubjects(t testing.TB, subjects ...string) {
	t.Helper()
	cl := Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, s := range subjects {
		_, _ = cl.DeleteSubject(ctx, s, sr.SoftDelete)
		_, _ = cl.DeleteSubject(ctx, s, sr.HardDelete)
		if v, err := cl.SubjectVersions(ctx, s); err == nil && len(v) > 0 {
			t.Fatalf("registrytest: subject %s still has versions %v after deletion", s, v)
		}
	}
}
