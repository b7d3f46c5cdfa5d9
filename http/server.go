// Package http is the REST transport of pds: routes, authentication, request
// ids, access logs and the one place that turns an error into problem+json.
// Handlers decode the request, call the service operation and write its
// envelope; no operation is implemented here.
package http

import (
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/httpwire"
	"github.com/productdata/pds/service"
)

// Server routes REST calls to the service.
type Server struct {
	svc    *service.Service
	log    *slog.Logger
	router *httprouter.Router
}

// New returns the REST handler. mcp, when not nil, serves /v1/mcp.
func New(svc *service.Service, log *slog.Logger, mcp http.Handler) *Server {
	s := &Server{svc: svc, log: log}
	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.HandleOPTIONS = false
	r.NotFound = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.writeError(w, req, domain.Errorf(domain.CodeRouteNotFound, "no route %s %s; see the API in the README", req.Method, req.URL.Path))
	})
	r.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		allow := w.Header().Get("Allow")
		s.writeError(w, req, httpwire.MethodNotAllowed(allow, req.Method+" is not allowed here; allowed: "+allow))
	})
	r.PanicHandler = func(w http.ResponseWriter, req *http.Request, v any) {
		s.log.Error("panic", "request_id", requestID(req), "panic", v, "stack", string(debug.Stack()))
		s.writeError(w, req, domain.Internal(errors.New("panic")))
	}

	r.GET("/v1/whoami", s.op(s.whoami))
	r.POST("/v1/identifiers/validate", s.op(s.validate))
	r.POST("/v1/digital-links/resolve", s.op(s.parseLink))
	r.GET("/v1/products/:identifier", s.op(s.getProduct))
	r.POST("/v1/products/:identifier", s.op(s.postProduct))
	r.GET("/v1/products/:identifier/dpp", s.op(product(svc.Passport)))
	r.GET("/v1/products/:identifier/evidence", s.op(product(svc.Evidence)))
	r.GET("/v1/sources/:source_id", s.op(s.source))
	if mcp != nil {
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"} {
			r.Handler(m, "/v1/mcp", mcp)
		}
	}
	s.router = r
	return s
}

// ServeHTTP gives every request an id, logs it, and routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := service.NewRequestID()
	w.Header().Set("X-Request-Id", id)
	r = r.WithContext(service.WithCallerSlot(service.WithRequestID(r.Context(), id)))
	rec := recorders.Get().(*recorder)
	rec.ResponseWriter, rec.status, rec.bytes, rec.code = w, 0, 0, ""
	s.router.ServeHTTP(rec, r)
	attrs := []slog.Attr{
		slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", rec.statusCode()), slog.Int64("bytes", rec.bytes),
		slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
	}
	if c := service.NotedCaller(r.Context()); c != nil {
		attrs = append(attrs, slog.String("tenant", c.Tenant), slog.String("key_id", c.KeyID))
	}
	if rec.code != "" {
		attrs = append(attrs, slog.String("code", rec.code))
	}
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
	rec.ResponseWriter = nil
	recorders.Put(rec)
}

var recorders = sync.Pool{New: func() any { return &recorder{} }}

// recorder remembers what was written, for the access log.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	code   string
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

// handler is an operation's REST adapter.
type handler func(r *http.Request, ps httprouter.Params, c service.Caller) (*service.Result, error)

// op authenticates, runs h and writes its envelope or its error.
func (s *Server) op(h handler) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		start := time.Now()
		c, err := s.svc.Authenticate(r.Header.Get("Authorization"))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		service.NoteCaller(r.Context(), c)
		res, err := h(r, ps, c)
		httpwire.SetRateLimit(w.Header(), s.svc, c)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		buf := bufs.Get().(*[]byte)
		b := res.AppendEnvelope((*buf)[:0], requestID(r), time.Since(start))
		h := w.Header()
		h["Content-Type"] = jsonType
		h["Content-Length"] = []string{strconv.Itoa(len(b))}
		w.WriteHeader(http.StatusOK)
		w.Write(b)
		if cap(b) <= 1<<20 {
			*buf = b
			bufs.Put(buf)
		}
	}
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
	if rec, ok := w.(*recorder); ok {
		rec.code = p.Code
	}
	b, _ := json.Marshal(p)
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
	return service.DecodeArgs(body, v, false)
}
