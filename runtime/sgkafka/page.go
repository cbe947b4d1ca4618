package sgkafka

import (
	"embed"
	"encoding/json"
	"html/template"
	"net/http"
	"time"

	"github.com/streamgen/streamgen/runtime/internal/httpsec"
)

// The live page: GET / on an instance's query endpoint (and on its metrics
// endpoint) is a page that draws the topology the runtime built and polls
// GET /status for the figures: node rates, tasks and their states, lag,
// stores, the group's members and their tasks, rebalances, dead letters,
// and a box for interactive queries against the same endpoint. Everything
// it loads is embedded in the binary (no CDN, nothing fetched at run
// time); the page itself holds no data, so it needs no token, while
// /status and the queries need the token as everything else does: the
// page asks for it once and sends it as a bearer header. The content
// security policy allows only the page's own script and style.

//go:embed page
var pageFiles embed.FS

var pageTemplate = template.Must(template.ParseFS(pageFiles, "page/index.html"))

// pageRefresh is how often the page polls /status (?refresh=<ms>
// overrides it in the page's address).
const pageRefresh = time.Second

// pageData is what the page's template shows: no figure, no name of the
// application, nothing the token guards.
type pageData struct {
	Token     bool
	Queries   bool
	RefreshMS int64
}

const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// pageHandler serves the page and /status, and passes every other request
// to next (the interactive queries; nil: 404). stores are the names the
// query box offers.
func pageHandler(e *Engine, token string, stores []string, next http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		pageHeaders(w)
		pageTemplate.Execute(w, pageData{Token: token != "", Queries: next != nil, RefreshMS: pageRefresh.Milliseconds()})
	})
	static := http.FileServerFS(pageFiles)
	mux.HandleFunc("GET /page/{file}", func(w http.ResponseWriter, r *http.Request) {
		if f := r.PathValue("file"); f != "page.js" && f != "page.css" {
			http.NotFound(w, r)
			return
		}
		pageHeaders(w)
		static.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		if !httpsec.Authorized(r, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="streamgen"`)
			http.Error(w, "streamgen: /status needs the bearer token of --http-token-file", http.StatusUnauthorized)
			return
		}
		st := e.Status(r.Context())
		if next != nil {
			st.Queryable = stores
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.Encode(st)
	})
	if next == nil {
		next = http.NotFoundHandler()
	}
	mux.Handle("/", next)
	return mux
}

func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
}
