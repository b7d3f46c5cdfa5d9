package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/http/httpwire"
	"github.com/productdata/pds/internal/metrics"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
)

// ProtocolVersion is the one MCP revision this endpoint speaks.
const ProtocolVersion = "2026-07-28"

// Keys of params._meta (SEP-2575).
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// handler serves /v1/mcp.
type handler struct {
	svc     *service.Service
	log     *slog.Logger
	origins originList
	metrics *metrics.Metrics // nil: not counted
	tools   []*tool
	byName  map[string]*tool
	// Results that never change, encoded once.
	discoverResult json.RawMessage
	listResult     json.RawMessage
}

// New returns the MCP endpoint's handler. allowedOrigins are the browser
// origins (scheme://host[:port]) accepted besides loopback ones.
func New(svc *service.Service, log *slog.Logger, allowedOrigins []string) http.Handler {
	return NewWithMetrics(svc, log, allowedOrigins, nil)
}

// NewWithMetrics is New counting tool calls by tool and outcome, and calls
// refused by a rate limit or quota, in m.
func NewWithMetrics(svc *service.Service, log *slog.Logger, allowedOrigins []string, m *metrics.Metrics) http.Handler {
	h := &handler{svc: svc, log: log, origins: newOriginList(allowedOrigins), tools: newTools(svc), metrics: m}
	h.byName = make(map[string]*tool, len(h.tools))
	for _, t := range h.tools {
		h.byName[t.Name] = t
	}
	var err error
	if h.discoverResult, err = encode(discoverResult()); err != nil {
		panic(err)
	}
	if h.listResult, err = encode(listResult(h.tools)); err != nil {
		panic(err)
	}
	return h
}

// request is a JSON-RPC request as read from the body.
type request struct {
	id     json.RawMessage // nil when absent (a notification) or unreadable
	method string
	params json.RawMessage // nil when absent
}

// ServeHTTP runs the checks in the order of the package comment and then the
// method.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rid := service.RequestID(r.Context())
	start, ok := service.RequestStart(r.Context())
	if !ok { // served without the REST router in front
		start = time.Now()
		rid = service.NewRequestID()
		w.Header().Set("X-Request-Id", rid)
	}
	if r.Method != http.MethodPost {
		h.writeError(w, rid, nil, httpwire.MethodNotAllowed(http.MethodPost,
			r.Method+" is not allowed: the MCP endpoint takes each JSON-RPC message as its own POST (there is no GET stream and no session)"))
		return
	}
	if origin, ok := r.Header["Origin"]; ok && !h.origins.allowed(origin[0]) {
		h.writeError(w, rid, nil, domain.Errorf(domain.CodeForbidden,
			"Origin %q is not allowed; the MCP endpoint accepts loopback origins and those configured with --allowed-origins", clip(origin[0])))
		return
	}
	caller, err := h.svc.Authenticate(r.Header.Get("Authorization"))
	if err != nil {
		h.writeError(w, rid, nil, err)
		return
	}
	if !slices.Contains(caller.Scopes, keys.ScopeMCP) {
		h.writeError(w, rid, nil, domain.Errorf(domain.CodeForbidden, "this key lacks the %s scope that the MCP endpoint needs", keys.ScopeMCP))
		return
	}
	service.NoteCaller(r.Context(), caller)
	w = &limitWriter{ResponseWriter: w, svc: h.svc, caller: caller}
	body, err := httpwire.ReadBody(w, r)
	if err != nil {
		h.writeError(w, rid, nil, err)
		return
	}
	req, rerr := parseRequest(body)
	if rerr != nil {
		h.writeError(w, rid, req.id, rerr)
		return
	}
	if req.id == nil {
		// A notification: this revision defines none a server acts on over
		// Streamable HTTP, so it is accepted and dropped.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if err := checkHeaders(r.Header, req); err != nil {
		h.writeError(w, rid, req.id, err)
		return
	}
	switch req.method {
	case "server/discover", "tools/list", "tools/call":
	default:
		h.writeError(w, rid, req.id, methodNotFound(req.method))
		return
	}
	if err := checkMeta(r.Header, req.params); err != nil {
		h.writeError(w, rid, req.id, err)
		return
	}
	var result json.RawMessage
	switch req.method {
	case "server/discover":
		result = h.discoverResult
	case "tools/list":
		result = h.listResult
	case "tools/call":
		if result, err = h.callTool(r.Context(), caller, req.params, rid, start); err != nil {
			h.writeError(w, rid, req.id, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, "application/json", response{JSONRPC: "2.0", ID: req.id, Result: result})
}

// parseRequest reads body as one JSON-RPC 2.0 request or notification. On an
// error, the returned request holds the id when it could be read.
func parseRequest(body []byte) (request, error) {
	var req request
	trimmed := bytes.TrimSpace(body)
	if !json.Valid(trimmed) {
		return req, rpcErr(codeParseError, "the body is not valid JSON")
	}
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return req, rpcErr(codeInvalidRequest, "batches are not supported: send one JSON-RPC request per POST")
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &msg); err != nil {
		return req, rpcErr(codeInvalidRequest, "the body is not a JSON-RPC request object")
	}
	rawID, hasID := msg["id"]
	if hasID {
		if !validID(rawID) {
			if string(rawID) == "null" {
				return req, rpcErr(codeInvalidRequest, "id is null; a request needs a string or integer id (leave id out only for a notification)")
			}
			return req, rpcErr(codeInvalidRequest, "id must be a string or an integer")
		}
		req.id = rawID
	}
	var version string
	if err := json.Unmarshal(msg["jsonrpc"], &version); err != nil || version != "2.0" {
		return req, rpcErr(codeInvalidRequest, `jsonrpc must be "2.0"`)
	}
	rawMethod, ok := msg["method"]
	if !ok {
		return req, rpcErr(codeInvalidRequest, "the request has no method")
	}
	if err := json.Unmarshal(rawMethod, &req.method); err != nil || req.method == "" {
		return req, rpcErr(codeInvalidRequest, "method must be a non-empty string")
	}
	if p, ok := msg["params"]; ok {
		req.params = p
	}
	return req, nil
}

// validID reports whether raw is a JSON string or integer.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		var s string
		return json.Unmarshal(raw, &s) == nil
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return false
	}
	return !bytes.ContainsAny(raw, ".eE")
}

// checkHeaders compares the request metadata headers with the body and checks
// the protocol version (SEP-2243, SEP-2575).
func checkHeaders(hdr http.Header, req request) error {
	version := strings.TrimSpace(hdr.Get("MCP-Protocol-Version"))
	if version == "" {
		return rpcErr(codeHeaderMismatch, "the MCP-Protocol-Version header is required; send MCP-Protocol-Version: "+ProtocolVersion)
	}
	method := strings.TrimSpace(hdr.Get("Mcp-Method"))
	if method == "" {
		return rpcErr(codeHeaderMismatch, "the Mcp-Method header is required; send Mcp-Method: "+clip(req.method))
	}
	if method != req.method {
		return rpcErr(codeHeaderMismatch, "header mismatch: Mcp-Method "+quote(method)+" does not match the body's method "+quote(req.method))
	}
	if req.method == "tools/call" {
		name, ok := hdr["Mcp-Name"]
		if !ok {
			return rpcErr(codeHeaderMismatch, "the Mcp-Name header is required for tools/call; send the tool's name in it")
		}
		header, err := decodeHeaderValue(strings.TrimSpace(name[0]))
		if err != nil {
			return rpcErr(codeHeaderMismatch, "the Mcp-Name header is malformed: "+err.Error())
		}
		var p struct {
			Name *string `json:"name"`
		}
		if json.Unmarshal(req.params, &p) == nil && p.Name != nil && *p.Name != header {
			return rpcErr(codeHeaderMismatch, "header mismatch: Mcp-Name "+quote(header)+" does not match the body's params.name "+quote(*p.Name))
		}
	}
	if version != ProtocolVersion {
		return &versionError{requested: version}
	}
	return nil
}

// decodeHeaderValue undoes the Base64 sentinel encoding (=?base64?…?=).
func decodeHeaderValue(v string) (string, error) {
	const prefix, suffix = "=?base64?", "?="
	if !strings.HasPrefix(v, prefix) || !strings.HasSuffix(v, suffix) || len(v) < len(prefix)+len(suffix) {
		return v, nil
	}
	b, err := base64StdDecode(v[len(prefix) : len(v)-len(suffix)])
	if err != nil {
		return "", errors.New("the Base64 value does not decode")
	}
	return string(b), nil
}

// checkMeta checks params and its _meta: both objects, _meta naming the
// protocol version (the one in the header) and the client's capabilities.
func checkMeta(hdr http.Header, params json.RawMessage) error {
	if params == nil {
		return rpcErr(codeInvalidParams, "params is required and must hold _meta with "+metaProtocolVersion+" and "+metaClientCapabilities)
	}
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	if !isObject(params) || json.Unmarshal(params, &p) != nil {
		return rpcErr(codeInvalidParams, "params must be an object")
	}
	if p.Meta == nil || !isObject(p.Meta) {
		return rpcErr(codeInvalidParams, "params._meta is required: an object with "+metaProtocolVersion+" and "+metaClientCapabilities)
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(p.Meta, &meta); err != nil {
		return rpcErr(codeInvalidParams, "params._meta must be an object")
	}
	var version string
	if err := json.Unmarshal(meta[metaProtocolVersion], &version); err != nil || version == "" {
		return rpcErr(codeInvalidParams, "params._meta lacks "+metaProtocolVersion+" (a string such as "+quote(ProtocolVersion)+")")
	}
	if caps, ok := meta[metaClientCapabilities]; !ok || !isObject(caps) {
		return rpcErr(codeInvalidParams, "params._meta lacks "+metaClientCapabilities+" (an object; {} declares none)")
	}
	if header := strings.TrimSpace(hdr.Get("MCP-Protocol-Version")); version != header {
		return rpcErr(codeHeaderMismatch, "header mismatch: MCP-Protocol-Version "+quote(header)+" does not match params._meta "+metaProtocolVersion+" "+quote(version))
	}
	return nil
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func quote(s string) string {
	b, _ := domain.Marshal(clip(s))
	return string(b)
}

// clip shortens what a caller sent before it is echoed in a message.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

// limitWriter adds the caller's RateLimit-* headers, as they stand after the
// call, to whatever response is written.
type limitWriter struct {
	http.ResponseWriter
	svc    *service.Service
	caller domain.Caller
	set    bool
}

func (lw *limitWriter) WriteHeader(code int) {
	if !lw.set {
		lw.set = true
		httpwire.SetRateLimit(lw.Header(), lw.svc, lw.caller)
	}
	lw.ResponseWriter.WriteHeader(code)
}

func (lw *limitWriter) Write(b []byte) (int, error) {
	if !lw.set {
		lw.WriteHeader(http.StatusOK)
	}
	return lw.ResponseWriter.Write(b)
}
