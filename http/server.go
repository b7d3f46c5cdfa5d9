package http

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/url"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/klauspost/compress/gzhttp"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/http/httpwire"
	"github.com/productdata/pds/http/openapi"
	"github.com/productdata/pds/internal/buildinfo"
	"github.com/productdata/pds/internal/metrics"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
)

// Server routes REST calls to the service.
type Server struct {
	svc     *service.Service
	log     *slog.Logger
	router  *httprouter.Router
	metrics *metrics.Metrics

	state       atomic.Int32 // a State
	inFlight    atomic.Int64
	maxInFlight int64
	notFound    *metrics.Route
	routes      []string     // "METHOD /pattern", for Routes
	compressed  http.Handler // the router behind gzip and zstd content coding
}

// State is what /readyz reports.
type State int32

// The states of a server: Ready answers /readyz with 200, the others 503.
const (
	Ready State = iota
	Starting
	Draining
)

// DefaultMaxInFlight is how many requests are answered at once before more
// are refused with 503 SERVICE_UNAVAILABLE and Retry-After.
const DefaultMaxInFlight = 1024

// Options are the REST handler's settings; the zero value is fine.
type Options struct {
	// Metrics receives the request metrics (default: a set of its own).
	Metrics *metrics.Metrics
	// MaxInFlight bounds the requests answered at once (default
	// DefaultMaxInFlight; negative: no bound).
	MaxInFlight int
	// Resolver, when set, answers every path outside /v1 and the probes
	// (the GS1 Digital Link resolver: passport pages, linksets), with no
	// key. ResolverOnly serves it and the probes alone, without the API (a
	// listener of its own).
	Resolver     http.Handler
	ResolverOnly bool
}

// New returns the REST handler with default options. mcp, when not nil,
// serves /v1/mcp.
func New(svc *service.Service, log *slog.Logger, mcp http.Handler) *Server {
	return NewWithOptions(svc, log, mcp, Options{})
}

// NewWithOptions returns the REST handler.
func NewWithOptions(svc *service.Service, log *slog.Logger, mcp http.Handler, o Options) *Server {
	if o.Metrics == nil {
		o.Metrics = metrics.New(nil)
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	s := &Server{svc: svc, log: log, metrics: o.Metrics, maxInFlight: int64(o.MaxInFlight)}
	s.notFound = s.metrics.Route("unmatched")
	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.HandleOPTIONS = true
	r.GlobalOPTIONS = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Allow", allowFor(req.URL.Path, w.Header().Get("Allow")))
		w.WriteHeader(http.StatusNoContent)
	})
	resolverRoute := s.metrics.Route("resolver")
	r.NotFound = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if o.Resolver != nil && resolves(req.URL.Path) {
			setRoute(w, resolverRoute)
			o.Resolver.ServeHTTP(w, req)
			return
		}
		s.writeError(w, req, routeNotFound(req))
	})
	r.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		allow := allowFor(req.URL.Path, w.Header().Get("Allow"))
		s.writeError(w, req, httpwire.MethodNotAllowed(allow, req.Method+" is not allowed here; allowed: "+allow))
	})
	r.PanicHandler = func(w http.ResponseWriter, req *http.Request, v any) {
		s.log.Error("panic", "request_id", requestID(req), "panic", v, "stack", string(debug.Stack()))
		s.writeError(w, req, domain.Internal(errors.New("panic")))
	}
	s.router = r
	wrap, err := gzhttp.NewWrapper(gzhttp.MinSize(MinCompressSize), gzhttp.CompressionLevel(gzipLevel))
	if err != nil {
		panic(err) // the options are constants
	}
	s.compressed = wrap(r)

	if o.ResolverOnly {
		s.probes()
		return s
	}
	s.get("/v1/whoami", s.op("", "whoami", s.whoami))
	s.post("/v1/identifiers/validate", s.op(keys.ScopeValidate, "validate_identifier", s.validate))
	s.post("/v1/digital-links/resolve", s.op(keys.ScopeParse, "parse_digital_link", s.parseLink))
	s.get("/v1/products/:identifier", s.op(keys.ScopeRead, "get_product", s.getProduct))
	s.post("/v1/products/:identifier", s.op(keys.ScopeResolve, "resolve_identifiers", s.postProduct))
	s.post("/v1/products/:identifier/stream", s.resolveStream)
	s.get("/v1/products/:identifier/dpp", s.op(keys.ScopeRead, "get_passport", product(svc.Passport)))
	s.get("/v1/products/:identifier/evidence", s.op(keys.ScopeRead, "get_evidence", product(svc.Evidence)))
	s.get("/v1/sources/:source_id", s.op(keys.ScopeSources, "get_source", s.source))
	s.get("/v1/openapi.json", s.openapiJSON)
	s.get("/v1/openapi.yaml", s.openapiYAML)
	s.probes()
	if mcp != nil {
		s.routes = append(s.routes, "POST /v1/mcp")
		route := s.metrics.Route("/v1/mcp")
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"} {
			r.Handle(m, "/v1/mcp", func(w http.ResponseWriter, req *http.Request, _ httprouter.Params) {
				setRoute(w, route)
				mcp.ServeHTTP(w, req)
			})
		}
	}
	return s
}

// probes registers /livez, /healthz and /readyz.
func (s *Server) probes() {
	s.get("/livez", s.livez)
	s.get("/healthz", s.livez)
	s.get("/readyz", s.readyz)
}

// resolves reports whether a path belongs to the resolver: every path
// outside the API (/v1) and the probes.
func resolves(path string) bool {
	switch path {
	case "/v1", "/livez", "/healthz", "/readyz":
		return false
	}
	return !strings.HasPrefix(path, "/v1/")
}

// get registers h for GET and HEAD (net/http drops a HEAD answer's body).
func (s *Server) get(path string, h httprouter.Handle) {
	h = s.routed(path, h)
	s.routes = append(s.routes, "GET "+path)
	s.router.GET(path, h)
	s.router.HEAD(path, h)
}

func (s *Server) post(path string, h httprouter.Handle) {
	s.routes = append(s.routes, "POST "+path)
	s.router.POST(path, s.routed(path, h))
}

// routed notes the route pattern for the metrics.
func (s *Server) routed(path string, h httprouter.Handle) httprouter.Handle {
	route := s.metrics.Route(path)
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		setRoute(w, route)
		unescapeParams(r, ps)
		h(w, r, ps)
	}
}

// escapedKey marks a request routed on its escaped path (see routable).
type escapedKey struct{}

// routable returns r as the router should see it. httprouter matches the
// decoded path, so a product identifier holding an escaped '/' (a Digital
// Link URI, https%3A%2F%2Fid.gs1.org%2F01%2F…) would be split into
// segments and match nothing. Such a request is routed on its escaped path
// instead, and routed unescapes its parameters again. Only a path under
// /v1/products/ whose escaping is not Go's default (RawPath set) is
// affected; every other request is routed as it came.
func routable(r *http.Request) *http.Request {
	if r.URL.RawPath == "" || !strings.HasPrefix(r.URL.Path, "/v1/products/") {
		return r
	}
	raw := r.URL.EscapedPath()
	if !strings.Contains(raw, "%2F") && !strings.Contains(raw, "%2f") {
		return r
	}
	u := *r.URL
	u.Path, u.RawPath = raw, ""
	r2 := r.WithContext(context.WithValue(r.Context(), escapedKey{}, true))
	r2.URL = &u
	return r2
}

// unescapeParams undoes the escaping of the parameters of a request routed
// on its escaped path.
func unescapeParams(r *http.Request, ps httprouter.Params) {
	if r.Context().Value(escapedKey{}) == nil {
		return
	}
	for i := range ps {
		if v, err := url.PathUnescape(ps[i].Value); err == nil {
			ps[i].Value = v
		}
	}
}

func setRoute(w http.ResponseWriter, route *metrics.Route) {
	if rec := recorderOf(w); rec != nil {
		rec.route = route
	}
}

// recorderOf finds the request's recorder under the writers wrapped around
// it (the compressing writer).
func recorderOf(w http.ResponseWriter) *recorder {
	for {
		switch x := w.(type) {
		case *recorder:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

// MinCompressSize is the smallest answer that is compressed for a client that
// accepts gzip or zstd; a smaller one is sent as it is (compression would
// save little and cost more than the bytes it saves).
const MinCompressSize = 1024

// gzipLevel is the gzip level: klauspost/compress's level 5 keeps most of the
// size gain of the default at a fraction of its time.
const gzipLevel = 5

var varyAcceptEncoding = []string{"Accept-Encoding"}

// allowFor corrects httprouter's Allow for /v1/products/{x}, where one
// pattern stands for several documented paths: resolve takes POST, search
// and a product GET.
func allowFor(path, routerAllow string) string {
	rest, ok := strings.CutPrefix(path, "/v1/products/")
	if !ok || strings.Contains(rest, "/") {
		return routerAllow
	}
	if rest == "resolve" {
		return "POST, OPTIONS"
	}
	return "GET, HEAD, OPTIONS"
}

// routeNotFound is the ROUTE_NOT_FOUND of a path no route matches. A URI
// written into a product path unescaped is the likely mistake there, so the
// detail says how to send one.
func routeNotFound(r *http.Request) error {
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/products/")
	if ok && (strings.HasPrefix(strings.ToLower(rest), "http:/") || strings.HasPrefix(strings.ToLower(rest), "https:/")) {
		return domain.Errorf(domain.CodeRouteNotFound, "no route %s %s; to look up a Digital Link URI, percent-encode it as one path segment "+
			"(/v1/products/https%%3A%%2F%%2Fid.gs1.org%%2F01%%2F09520123456788), or send it in POST /v1/products/resolve", r.Method, r.URL.Path)
	}
	return domain.Errorf(domain.CodeRouteNotFound, "no route %s %s; see the API in the README", r.Method, r.URL.Path)
}

// SetState sets what /readyz reports.
func (s *Server) SetState(st State) { s.state.Store(int32(st)) }

// ServeHTTP gives every request an id, logs it, and routes it; a head over
// httpwire.MaxHead is refused first.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := service.NewRequestID()
	w.Header().Set("X-Request-Id", id)
	r = r.WithContext(service.WithRequest(r.Context(), id, start))
	rec := recorders.Get().(*recorder)
	rec.ResponseWriter, rec.status, rec.bytes, rec.code, rec.route = w, 0, 0, "", s.notFound
	// Deferred, so that a panic outside the router (whose own handler
	// answers the panics under it) gives back its slot on its way to the
	// connection's recover.
	s.metrics.Start()
	defer s.metrics.Done()
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	if err := httpwire.CheckHead(r); err != nil {
		// net/http reads heads past MaxHead (httpfront's MaxHeaderBytes),
		// so that this answer is a problem; the client that sent one is
		// likely to send more, so the connection closes.
		rec.Header().Set("Connection", "close")
		s.writeError(rec, r, err)
	} else if s.maxInFlight > 0 && n > s.maxInFlight {
		s.metrics.Shed("requests")
		s.writeError(rec, r, &domain.Error{Code: domain.CodeServiceUnavailable, Detail: "too many requests in flight; try again shortly", RetryAfter: 1})
	} else if _, ok := r.Header["Accept-Encoding"]; ok {
		s.compressed.ServeHTTP(rec, routable(r))
	} else {
		// The client accepts no content coding: skip the compressing
		// writer, but say that the answer depends on the header.
		rec.Header()["Vary"] = varyAcceptEncoding
		s.router.ServeHTTP(rec, routable(r))
	}
	end := time.Now() // one clock read for the metrics and the access log
	rec.route.Observe(r.Method, rec.statusCode(), end.Sub(start))
	s.logRequest(r, id, rec, start, end)
	rec.ResponseWriter = nil
	recorders.Put(rec)
}

// logRequest writes the access log line. The record is built here rather
// than by Logger.LogAttrs, which also records the caller's program counter
// (a stack walk on every request) for a source the handler never writes.
func (s *Server) logRequest(r *http.Request, id string, rec *recorder, start, end time.Time) {
	ctx := r.Context()
	h := s.log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	var arr [9]slog.Attr // added in one call: one allocation for the attributes past the record's first five
	attrs := append(arr[:0], slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", rec.statusCode()), slog.Int64("bytes", rec.bytes),
		slog.Float64("duration_ms", float64(end.Sub(start).Microseconds())/1000))
	if c := service.NotedCaller(ctx); c != nil {
		attrs = append(attrs, slog.String("tenant", c.Tenant), slog.String("key_id", c.KeyID))
	}
	if rec.code != "" {
		attrs = append(attrs, slog.String("code", rec.code))
	}
	lr := slog.NewRecord(end, slog.LevelInfo, "request", 0)
	lr.AddAttrs(attrs...)
	_ = h.Handle(ctx, lr)
}

var recorders = sync.Pool{New: func() any { return &recorder{} }}

// recorder remembers what was written, for the access log.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	code   string
	route  *metrics.Route
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) statusCode() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func requestID(r *http.Request) string { return service.RequestID(r.Context()) }

// requestStart is when ServeHTTP took r, from which an answer's
// meta.duration_ms counts (now, for a request that did not come through
// it).
func requestStart(r *http.Request) time.Time {
	if start, ok := service.RequestStart(r.Context()); ok {
		return start
	}
	return time.Now()
}

// handler is an operation's REST adapter.
type handler func(r *http.Request, ps httprouter.Params, c domain.Caller) (*service.Result, error)

// op authenticates, checks the key holds scope (before the body is read),
// runs h and writes its envelope or its error. opName is the operation's
// name (as MCP's tool); the FORBIDDEN detail names it by its REST call.
func (s *Server) op(scope, opName string, h handler) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		start := requestStart(r)
		c, err := s.svc.Authenticate(r.Header.Get("Authorization"))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		service.NoteCaller(r.Context(), c)
		name, need := productOp(r.Method, ps.ByName("identifier"), opName, scope)
		if err := service.CheckScope(c, restCalls[name], need); err != nil {
			s.writeError(w, r, err)
			return
		}
		res, err := h(r, ps, c)
		httpwire.SetRateLimit(w.Header(), s.svc, c)
		if err != nil {
			s.countRefusal(c, err)
			s.writeError(w, r, err)
			return
		}
		s.writeResult(w, r, name, res, start)
		res.Release()
	}
}

// writeResult writes an operation's answer: its snapshot headers, its ETag
// (product reads, which a matching If-None-Match answers 304), and its
// envelope. res's bytes are copied into the envelope before it returns.
func (s *Server) writeResult(w http.ResponseWriter, r *http.Request, name string, res *service.Result, start time.Time) {
	h := w.Header()
	setSnapshotHeaders(h, res.Snapshot)
	if isProductRead(name) {
		etag := etagOf(res)
		h["Etag"] = []string{etag}
		if inm, ok := r.Header["If-None-Match"]; ok && notModified(inm, etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	buf := bufs.Get().(*[]byte)
	b := res.AppendEnvelope((*buf)[:0], requestID(r), time.Since(start))
	h["Content-Type"] = jsonType
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	sendWhole(w, r, b)
	if cap(b) <= 1<<20 {
		*buf = b
		bufs.Put(buf)
	}
}

// restCalls names each operation as a REST caller knows it, for the
// FORBIDDEN detail: a REST caller is never told about MCP tool names.
var restCalls = map[string]string{
	"whoami":              "GET /v1/whoami",
	"validate_identifier": "POST /v1/identifiers/validate",
	"parse_digital_link":  "POST /v1/digital-links/resolve",
	"get_product":         "GET /v1/products/{identifier}",
	"resolve_identifiers": "POST /v1/products/resolve",
	"resolve_stream":      "POST /v1/products/resolve/stream",
	"search_products":     "GET /v1/products/search",
	"get_passport":        "GET /v1/products/{identifier}/dpp",
	"get_evidence":        "GET /v1/products/{identifier}/evidence",
	"get_source":          "GET /v1/sources/{source_id}",
}

// productOp corrects the operation and scope of the /v1/products/{x}
// pattern, which also holds search (GET) and resolve (POST); a method that
// path does not take is answered 405 whatever the key's scopes.
func productOp(method, identifier, opName, scope string) (string, string) {
	switch {
	case opName != "get_product" && opName != "resolve_identifiers":
		return opName, scope
	case identifier == "search" && method != http.MethodPost:
		return "search_products", keys.ScopeSearch
	case identifier == "resolve" && method == http.MethodPost:
		return "resolve_identifiers", keys.ScopeResolve
	case method == http.MethodPost || identifier == "resolve" || identifier == "search":
		return opName, ""
	}
	return opName, scope
}

// countRefusal counts a call refused by a rate limit or quota.
func (s *Server) countRefusal(c domain.Caller, err error) {
	var de *domain.Error
	if errors.As(err, &de) && (de.Code == domain.CodeRateLimited || de.Code == domain.CodeTenantQuotaExceeded) {
		s.metrics.Refused(c.Tenant, de.Code)
	}
}

// openapiJSON serves the OpenAPI document as JSON. Like the probes it
// needs no key: OpenAPI tooling (generators, validators, API explorers)
// fetches it without credentials, and it says only what the published
// document says.
func (s *Server) openapiJSON(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	b, err := openapi.JSON()
	if err != nil {
		s.writeError(w, r, domain.Internal(err))
		return
	}
	w.Header()["Content-Type"] = jsonType
	w.Write(b)
}

// openapiYAML serves the OpenAPI document as written (no key needed).
func (s *Server) openapiYAML(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(openapi.YAML)
}

// probe is the body of /livez, /healthz and /readyz.
type probe struct {
	Status            string `json:"status"`
	Version           string `json:"version"`
	BuildID           string `json:"build_id,omitempty"`
	SnapshotCreatedAt string `json:"snapshot_created_at,omitempty"`
	// Reason says why the snapshot may not be served (status "damaged"
	// or "stale").
	Reason string `json:"reason,omitempty"`
	// DataAgeSeconds is how long ago the snapshot served was built.
	DataAgeSeconds *int64 `json:"data_age_seconds,omitempty"`
	// Trust is the freshness of the replica's root of trust, when the
	// server trusts one.
	Trust *probeTrust `json:"trust,omitempty"`
}

// probeTrust is what /readyz says of the timestamp statement the replica
// keeps: when it expires, the seconds left until then (negative past it),
// whether it has expired, and the statement's and the root's versions.
type probeTrust struct {
	TimestampExpires string `json:"timestamp_expires,omitempty"`
	ExpiresInSeconds int64  `json:"expires_in_seconds"`
	Stale            bool   `json:"stale"`
	TimestampVersion int64  `json:"timestamp_version"`
	RootVersion      int64  `json:"root_version"`
}

// livez answers 200 while the process can answer at all (no key needed).
func (s *Server) livez(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	writeProbe(w, http.StatusOK, probe{Status: "ok", Version: buildinfo.Version()})
}

// sendWhole writes a 200 answer with body b. net/http sends an answer that
// does not fit its 4 KiB connection buffer in two write system calls, the
// buffer's and the rest. When the body goes out as it is (no content coding)
// on a connection of the Listener, the connection gathers the writes of the
// headers and the body, and sends them in one: for a passport or evidence
// answer (5 to 11 KB) that is a system call, and a wakeup of the client,
// fewer a request.
func sendWhole(w http.ResponseWriter, r *http.Request, b []byte) {
	rec, _ := w.(*recorder)
	cc := httpwire.GathererOf(r.Context())
	var flusher http.Flusher
	if rec != nil {
		flusher, _ = rec.ResponseWriter.(http.Flusher)
	}
	if flusher == nil || cc == nil || len(b) < sendWholeMin || len(b) > sendWholeMax {
		w.WriteHeader(http.StatusOK)
		w.Write(b)
		return
	}
	cc.Gather()
	defer cc.Send()
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	flusher.Flush() // the headers (Content-Length is set) and the body, into the gathering connection
}

// sendWholeMin and sendWholeMax bound the bodies sendWhole gathers. A
// smaller one and its headers fit net/http's buffer, which sends them in one
// write anyway; copying a larger one (a resolve of hundreds of identifiers)
// costs more than the write it saves.
const (
	sendWholeMin = 3 << 10
	sendWholeMax = 32 << 10
)

// readyz answers 200 when a verified snapshot is open, none of its files
// changed or damaged since, it is not withheld as stale, and the server is
// neither starting nor draining; 503 with the reason otherwise (no key
// needed). Either way it says how old the data is and, with a root of
// trust, how fresh its timestamp statement is.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	now := time.Now()
	p := probe{Status: "ok", Version: buildinfo.Version()}
	snap := s.svc.Current()
	if snap != nil {
		p.BuildID = snap.Manifest.BuildID
		p.SnapshotCreatedAt = snap.Manifest.CreatedAt
		if created, err := time.Parse(time.RFC3339, snap.Manifest.CreatedAt); err == nil {
			age := int64(now.Sub(created) / time.Second)
			p.DataAgeSeconds = &age
		}
	}
	if f := s.svc.Freshness(); f != nil {
		p.Trust = &probeTrust{Stale: f.Stale(now), TimestampVersion: f.TimestampVersion, RootVersion: f.RootVersion}
		if !f.Expires.IsZero() {
			p.Trust.TimestampExpires = f.Expires.UTC().Format(time.RFC3339)
			p.Trust.ExpiresInSeconds = int64(math.Floor(f.Expires.Sub(now).Seconds())) // negative from the moment it expires
		}
	}
	withheld := s.svc.Withheld()
	switch {
	case State(s.state.Load()) == Starting:
		p.Status = "starting"
	case State(s.state.Load()) == Draining:
		p.Status = "draining"
	case snap == nil:
		p.Status = "no_snapshot"
	case snap.Damaged() != nil:
		p.Status, p.Reason = "damaged", snap.Damaged().Error()
	case withheld != nil:
		p.Status, p.Reason = "stale", domain.AsError(withheld).Detail
	}
	if p.Status != "ok" {
		w.Header().Set("Retry-After", "1")
		writeProbe(w, http.StatusServiceUnavailable, p)
		return
	}
	writeProbe(w, http.StatusOK, p)
}

func writeProbe(w http.ResponseWriter, status int, p probe) {
	b, _ := domain.Marshal(p)
	w.Header()["Content-Type"] = jsonType
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}

var (
	jsonType    = []string{"application/json"}
	problemType = []string{"application/problem+json"}
	bufs        = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}
)

// writeError is the one place an error becomes a problem+json response.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	de := domain.AsError(err)
	if de.Code == domain.CodeInternal {
		s.log.Error("internal error", "request_id", requestID(r), "error", err.Error())
	}
	p := httpwire.NewProblem(de, requestID(r))
	h := w.Header()
	h["Content-Type"] = problemType
	httpwire.SetProblemHeaders(h, err)
	if de.Code == domain.CodeUnauthenticated {
		// Close a connection that has not authenticated, so that idle
		// keep-alive connections of unknown clients cannot pile up.
		h.Set("Connection", "close")
	}
	if rec := recorderOf(w); rec != nil {
		rec.code = p.Code
	}
	b, _ := domain.Marshal(p)
	w.WriteHeader(p.Status)
	w.Write(b)
}

// decodeBody reads a JSON object body into v: 415 for another media type,
// 413 past httpwire.MaxBody, 400 for anything that is not a JSON object of
// the right member types.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return domain.Errorf(domain.CodeUnsupportedMediaType, "send the body as application/json (got %q)", ct)
		}
	}
	body, err := httpwire.ReadBody(w, r)
	if err != nil {
		return err
	}
	return service.DecodeArgs(body, v)
}

// Routes lists the operations the router serves, as "METHOD /path/{param}",
// sorted, in the OpenAPI document's terms: the /v1/products/{identifier}
// pattern stands for the search (GET) and resolve (POST) paths too (a POST
// to any other product is 405), and HEAD and OPTIONS are left out (every GET
// path takes HEAD, every path but /v1/mcp OPTIONS).
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.routes {
		method, path, _ := strings.Cut(r, " ")
		var segs []string
		for _, seg := range strings.Split(path, "/") {
			if name, ok := strings.CutPrefix(seg, ":"); ok {
				seg = "{" + name + "}"
			}
			segs = append(segs, seg)
		}
		path = strings.Join(segs, "/")
		switch {
		case r == "GET /v1/products/:identifier":
			out = append(out, method+" "+path, "GET /v1/products/search")
		case r == "POST /v1/products/:identifier":
			out = append(out, "POST /v1/products/resolve")
		case r == "POST /v1/products/:identifier/stream":
			out = append(out, "POST /v1/products/resolve/stream")
		default:
			out = append(out, method+" "+path)
		}
	}
	sort.Strings(out)
	return out
}
