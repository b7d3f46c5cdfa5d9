package mcp

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/http/httpwire"
)

// JSON-RPC error codes: JSON-RPC 2.0's own and those MCP 2026-07-28 adds.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeHeaderMismatch = -32020
	codeUnsupportedVer = -32022
)

// rpcError is a failure answered with a JSON-RPC error response.
type rpcError struct {
	code    int
	message string
	data    any
}

func (e *rpcError) Error() string { return strconv.Itoa(e.code) + ": " + e.message }

func rpcErr(code int, message string) *rpcError { return &rpcError{code: code, message: message} }

// methodNotFound answers a method this endpoint does not serve. It names
// the supported version, since a legacy client calling initialize has no
// other way to learn it.
func methodNotFound(method string) *rpcError {
	return &rpcError{code: codeMethodNotFound,
		message: "method not found: " + quote(method) + "; this endpoint speaks MCP " + ProtocolVersion +
			" (stateless, no initialize or ping) and serves server/discover, tools/list and tools/call",
		data: map[string]any{"supported": []string{ProtocolVersion}}}
}

// versionError is an unsupported MCP-Protocol-Version.
type versionError struct{ requested string }

func (e *versionError) Error() string { return "unsupported protocol version " + e.requested }

// wireError is the error member of a JSON-RPC error response.
type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// response is a JSON-RPC response. ID is left out when the request's id
// could not be read.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
}

// versionProblem is the answer to an unsupported protocol version: a Problem
// (RFC 9457, spec 2.7) and a JSON-RPC error response in one object.
type versionProblem struct {
	httpwire.Problem
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Error   wireError       `json:"error"`
}

// writeError is the one place an error becomes a response: a JSON-RPC error
// for protocol failures, the combined Problem and JSON-RPC error for an
// unsupported protocol version, and problem+json for what fails before the
// body is read as JSON-RPC (method, origin, key, size). id is the request's
// id, or nil when it could not be read.
func (h *handler) writeError(w http.ResponseWriter, requestID string, id json.RawMessage, err error) {
	switch e := err.(type) {
	case *rpcError:
		status := http.StatusBadRequest
		if e.code == codeMethodNotFound {
			status = http.StatusNotFound
		}
		writeJSON(w, status, "application/json", response{JSONRPC: "2.0", ID: id,
			Error: &wireError{Code: e.code, Message: e.message, Data: e.data}})
	case *versionError:
		de := domain.Errorf(domain.CodeUnsupportedProtocolVersion,
			"MCP protocol version %s is not supported; this endpoint speaks %s: send it in MCP-Protocol-Version and params._meta", quote(e.requested), ProtocolVersion)
		p := httpwire.NewProblem(de, requestID)
		httpwire.SetProblemHeaders(w.Header(), de)
		writeJSON(w, p.Status, "application/problem+json", versionProblem{Problem: p, JSONRPC: "2.0", ID: id,
			Error: wireError{Code: codeUnsupportedVer, Message: "unsupported protocol version",
				Data: map[string]any{"supported": []string{ProtocolVersion}, "requested": e.requested}}})
	default:
		de := domain.AsError(err)
		if de.Code == domain.CodeInternal {
			h.log.Error("internal error", "request_id", requestID, "error", err.Error())
		}
		p := httpwire.NewProblem(de, requestID)
		httpwire.SetProblemHeaders(w.Header(), err)
		writeJSON(w, p.Status, "application/problem+json", p)
	}
}

// writeJSON writes v as one line of JSON.
func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	b, err := encode(v)
	if err != nil {
		status, contentType = http.StatusInternalServerError, "application/json"
		b = []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"the response could not be encoded"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// encode marshals v without escaping <, > and &, so that text blocks hold
// the REST bytes as they are.
func encode(v any) (json.RawMessage, error) {
	return domain.Marshal(v)
}

func base64StdDecode(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
