package resolver

import (
	"errors"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/munnerz/goautoneg"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/http/httpwire"
	"github.com/productdata/pds/service"
)

// Options configure a Handler; the zero value serves with no rate limit,
// links built on each request's own host, and no links to the /v1 API.
type Options struct {
	// Root is the resolver's public base URL (https://id.example.com), the
	// stem of every anchor and link it writes. Empty: each request's scheme
	// and Host.
	Root string
	// APILinks adds links to the /v1 answers for the product (which need a
	// key) to linksets and pages; APIRoot is their base URL (empty: the
	// resolver's root, for a resolver on the API's own listener).
	APILinks bool
	APIRoot  string
	// Meter limits each client address to Rate requests a second, Burst
	// deep (the service's quota.Meter); nil or Rate 0: no limit.
	Meter domain.Meter
	Rate  float64
	Burst int
	// TrustedProxies are the peers (a reverse proxy such as nginx) whose
	// X-Forwarded-For and X-Forwarded-Proto are believed: behind one, the
	// client address is the last X-Forwarded-For entry that is not itself a
	// trusted proxy.
	TrustedProxies []netip.Prefix
	// Version is the pds version the pages name.
	Version string
	Log     *slog.Logger
}

// Handler answers the resolver's paths. It is safe for concurrent use.
type Handler struct {
	svc   *service.Service
	o     Options
	pages *template.Template
}

// New returns the resolver over svc.
func New(svc *service.Service, o Options) *Handler {
	o.Root = strings.TrimSuffix(o.Root, "/")
	o.APIRoot = strings.TrimSuffix(o.APIRoot, "/")
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Handler{svc: svc, o: o, pages: pageTemplates}
}

// The resolver's own paths.
const (
	wellKnown  = "/.well-known/gs1resolver"
	pagePrefix = "/passport/"
)

const allowed = "GET, HEAD, OPTIONS"

// ServeHTTP answers one request: CORS for every origin (the data is public),
// the client address's rate limit, then the path.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Access-Control-Expose-Headers", "Link, Location, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, X-Request-Id")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		hd.Set("Allow", allowed)
		hd.Set("Access-Control-Allow-Methods", allowed)
		hd.Set("Access-Control-Allow-Headers", "Accept, Accept-Language")
		hd.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		h.fail(w, r, httpwire.MethodNotAllowed(allowed, r.Method+" is not allowed here; the resolver answers "+allowed))
		return
	}
	if err := h.charge(r, hd); err != nil {
		h.fail(w, r, err)
		return
	}
	path := r.URL.EscapedPath()
	switch {
	case path == wellKnown:
		h.description(w, r)
	case strings.HasPrefix(path, pagePrefix):
		h.page(w, r, path[len(pagePrefix)-1:])
	default:
		h.resolve(w, r, path)
	}
}

// charge takes one request from the client address's bucket and says where
// the address stands in the RateLimit-* headers.
func (h *Handler) charge(r *http.Request, hd http.Header) error {
	if h.o.Meter == nil || h.o.Rate <= 0 {
		return nil
	}
	addr := clientAddr(r, h.o.TrustedProxies)
	c := domain.Caller{KeyID: "addr:" + addr, Rate: h.o.Rate, Burst: h.o.Burst}
	err := h.o.Meter.Charge(r.Context(), c, "resolver", 1)
	if lr, ok := h.o.Meter.(service.LimitReporter); ok {
		if lim, ok := lr.Limits(c); ok {
			hd.Set("RateLimit-Limit", strconv.FormatInt(lim.Limit, 10))
			hd.Set("RateLimit-Remaining", strconv.FormatInt(lim.Remaining, 10))
			hd.Set("RateLimit-Reset", strconv.FormatInt(lim.Reset, 10))
		}
	}
	var de *domain.Error
	if errors.As(err, &de) && de.Code == domain.CodeRateLimited {
		return &domain.Error{Code: domain.CodeRateLimited, RetryAfter: de.RetryAfter,
			Detail: "this address may make " + strconv.FormatFloat(h.o.Rate, 'g', -1, 64) + " request(s) a second to the resolver (burst " + strconv.Itoa(max(h.o.Burst, 1)) + "); retry after the Retry-After delay"}
	}
	return err
}

// clientAddr is the address a request came from: the peer, or behind a
// trusted proxy the last X-Forwarded-For entry that is not a trusted proxy.
func clientAddr(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap()
	if !isTrusted(peer, trusted) {
		return peer.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a hop that is not an address: stop at what is known
		}
		a = a.Unmap()
		if !isTrusted(a, trusted) {
			return a.String()
		}
		peer = a
	}
	return peer.String()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// root is the base URL of the resolver for r: Options.Root, or the
// request's own scheme and host.
func (h *Handler) root(r *http.Request) string {
	if h.o.Root != "" {
		return h.o.Root
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); (p == "https" || p == "http") && h.fromTrustedProxy(r) {
		scheme = p
	}
	return scheme + "://" + r.Host
}

func (h *Handler) fromTrustedProxy(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	a, err := netip.ParseAddr(host)
	return err == nil && isTrusted(a.Unmap(), h.o.TrustedProxies)
}

// apiRoot is the base URL of the /v1 API, or "" when pages do not link it.
func (h *Handler) apiRoot(r *http.Request) string {
	switch {
	case !h.o.APILinks:
		return ""
	case h.o.APIRoot != "":
		return h.o.APIRoot
	}
	return h.root(r)
}

// Media types the resolver negotiates.
const (
	typeHTML    = "text/html"
	typeLinkset = "application/linkset+json"
	typeJSON    = "application/json"
	typeProblem = "application/problem+json"
)

// negotiate picks the media type a request's Accept prefers among offers;
// no Accept (or nothing acceptable) is the first offer.
func negotiate(r *http.Request, offers ...string) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return offers[0]
	}
	if t := goautoneg.Negotiate(accept, offers); t != "" {
		return t
	}
	return offers[0]
}

// fail answers an error: a page for a browser, problem+json for a program.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	de := domain.AsError(err)
	if de.Code == domain.CodeInternal {
		h.o.Log.Error("internal error", "request_id", service.RequestID(r.Context()), "error", err.Error())
	}
	p := httpwire.NewProblem(de, service.RequestID(r.Context()))
	httpwire.SetProblemHeaders(w.Header(), err)
	w.Header().Add("Vary", "Accept")
	if negotiate(r, typeHTML, typeProblem, typeJSON) != typeHTML {
		w.Header().Set("Content-Type", typeProblem)
		w.WriteHeader(p.Status)
		b, _ := domain.Marshal(p)
		w.Write(b)
		return
	}
	h.render(w, r, p.Status, "problem", problemPage{pageBase: h.base(r, p.Title), Problem: p})
}
