package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/streamgen/streamgen/gen"
	"github.com/streamgen/streamgen/internal/registrytest"
	"github.com/streamgen/streamgen/spec"
)

// registrySpec is a spec with one jsonschema topic whose record's field
// "amount" has type amountType.
func registrySpec(topic, amountType string) string {
	return fmt.Sprintf(`version: 1
package: demo
app: {id: demo-app}
records:
  Order:
    fields:
      id: {id: 1, type: string}
      amount: {id: 2, type: %s}
topics:
  %s: {key: string, value: Order, value_format: jsonschema}
  out: {key: string, value: Order}
topology:
  - name: p
    from: %s
    steps:
      - to: out
`, amountType, topic, topic)
}

// TestCheckRegistryReportsIncompatibleChange registers a record's schema
// on the real registry under BACKWARD, then checks a spec that changes a
// field's type: the refusal is reported at the record's spec line.
func TestCheckRegistryReportsIncompatibleChange(t *testing.T) {
	url := registrytest.URL(t)
	var b [4]byte
	rand.Read(b[:])
	topic := "orders-" + hex.EncodeToString(b[:])
	subject := topic + "-value"
	t.Cleanup(func() { registrytest.DeleteSubjects(t, subject) })

	dir := t.TempDir()
	v1 := registrySpec(topic, "int64")
	prog, err := spec.Parse("v1.yaml", []byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	schema, err := gen.RecordJSONSchema(prog.Records[0], spec.JSONRFC3339)
	if err != nil {
		t.Fatal(err)
	}
	cl := registrytest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := cl.RegisterSchema(ctx, subject, sr.Schema{Schema: schema, Type: sr.TypeJSON}, -1, -1); err != nil {
		t.Fatal(err)
	}
	if res := cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatBackward}, subject); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}

	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	if code, out, errOut := run(t, dir, "check", "-registry", url, "-spec", write("same.yaml", v1)); code != ExitOK {
		t.Fatalf("the registered schema itself: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := run(t, dir, "check", "-registry", url, "-spec", write("v2.yaml", registrySpec(topic, "string")))
	if code != ExitProblem {
		t.Fatalf("amount int64 → string: exit %d, want %d\n%s%s", code, ExitProblem, out, errOut)
	}
	want := fmt.Sprintf(`v2.yaml:5:3: topic %q value (subject %q): the registry's BACKWARD compatibility rule refuses`, topic, subject)
	if !strings.HasPrefix(out, want) {
		t.Errorf("report:\n%s\nwant it to start with:\n%s", out, want)
	}
	if !strings.Contains(errOut, "refuses 1 schema") {
		t.Errorf("stderr: %s", errOut)
	}
}

// TestCheckRegistryUnreachable is an I/O failure that names the side and
// never prints the URL's password.
func TestCheckRegistryUnreachable(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(registrySpec("orders", "int64")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, dir, "check", "-registry", "http://bob:s3cret@127.0.0.1:1/apis/ccompat/v7", "-spec", "s.yaml")
	if code != ExitIO || strings.Contains(errOut, "s3cret") || !strings.Contains(errOut, `s.yaml:5:3: topic "orders" value (subject "orders-value")`) {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
}
