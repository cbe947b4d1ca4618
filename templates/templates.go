// Package templates holds the files `streamgen init` writes into a new
// project: a Go module with a starter spec, its functions and tests, a
// Makefile, a Dockerfile, Kubernetes manifests and a Grafana dashboard.
//
// Every file under project/ ends in .tmpl, so that none of them is taken
// for part of this module (a go.mod would make project/ a module of its
// own, and a .go file would be compiled into this package); Render drops
// the suffix. The files are text/template templates with [[ and ]] as
// delimiters, because the dashboard's legends and the Makefile's shell
// already use {{ and $(...).
package templates

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"text/template"
)

//go:embed all:project
var files embed.FS

// Project is the embedded tree of templates, rooted at project/.
var Project, _ = fs.Sub(files, "project")

// Data is what the templates may refer to.
type Data struct {
	Module  string // the new module's path, e.g. example.com/myorders
	Name    string // the binary, application id and Kubernetes name: the module path's last element
	Version string // the streamgen version go.mod requires
	Replace string // a local checkout of streamgen for a replace directive, or ""
}

// Render renders every template and returns the files by slash-separated
// path relative to the project's root, without the .tmpl suffix.
func Render(d Data) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := fs.WalkDir(Project, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		name, ok := strings.CutSuffix(p, ".tmpl")
		if !ok {
			return fmt.Errorf("streamgen: templates: %s lacks the .tmpl suffix", p)
		}
		src, err := fs.ReadFile(Project, p)
		if err != nil {
			return err
		}
		t, err := template.New(path.Base(p)).Delims("[[", "]]").Option("missingkey=error").Parse(string(src))
		if err != nil {
			return fmt.Errorf("streamgen: templates: %v", err)
		}
		var b bytes.Buffer
		if err := t.Execute(&b, d); err != nil {
			return fmt.Errorf("streamgen: templates: %v", err)
		}
		out[name] = b.Bytes()
		return nil
	})
	return out, err
}
