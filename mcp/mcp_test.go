package mcp_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/mcp"
	"github.com/productdata/pds/service"
)

const (
	demo    = "09520123456788"
	demoSub = "gtin:" + demo
	absent  = "gtin:09520000000028" // covered by a source, not stored
	shop    = "gtin:09520000000011" // every claim licence-restricted
	srcReg  = "11111111-0000-4000-8000-000000000001"
	origin  = "https://app.example.com" // configured besides loopback
)

var reqIDPattern = regexp.MustCompile(`^req_[0-9A-HJKMNP-TV-Z]{26}$`)

type env struct {
	url  string
	keys map[string]string
}

// newEnv serves the passport test case over loopback: the REST server with
// the MCP handler mounted at /v1/mcp, both on one service.
func newEnv(t *testing.T) *env {
	t.Helper()
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	svc, secrets := ingesttest.Service(t, snap)
	return serve(t, svc, secrets)
}

func serve(t *testing.T, svc *service.Service, secrets map[string]string) *env {
	t.Helper()
	log := ingesttest.Logger(t)
	srv := httptest.NewServer(pdshttp.New(svc, log, mcp.New(svc, log, []string{origin})))
	t.Cleanup(srv.Close)
	return &env{url: srv.URL, keys: secrets}
}

type response struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
}

// do sends one HTTP request. key names a fixture key ("" sends none); hdr
// holds header name/value pairs set as given (a value of "-" deletes).
func (e *env) do(t *testing.T, method, path, key, body string, hdr map[string]string) response {
	t.Helper()
	req := ingesttest.NewRequest(t, method, e.url+path, e.keys[key], body)
	for k, v := range hdr {
		if v == "-" {
			req.Header.Del(k)
			continue
		}
		req.Header[k] = []string{v} // as given, so that name case reaches the server
	}
	var r response
	r.status, r.header, r.body, r.json = ingesttest.Send(t, req)
	return r
}

// meta is a complete params._meta.
func meta() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.ProtocolVersion,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "pds-test", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
}

// rpc encodes a JSON-RPC message; id nil makes a notification.
func rpc(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func callParams(tool string, args any) map[string]any {
	p := map[string]any{"name": tool, "_meta": meta()}
	if args != nil {
		p["arguments"] = args
	}
	return p
}

// headers are the request metadata headers a conforming client sends, with
// over applied on top.
func headers(method, name string, over map[string]string) map[string]string {
	h := map[string]string{
		"Accept":               "application/json, text/event-stream",
		"Mcp-Protocol-Version": mcp.ProtocolVersion,
		"Mcp-Method":           method,
	}
	if name != "" {
		h["Mcp-Name"] = name
	}
	for k, v := range over {
		h[k] = v
	}
	return h
}

// post sends a well-formed MCP request with the full key.
func (e *env) post(t *testing.T, id any, method string, params map[string]any) response {
	t.Helper()
	name, _ := params["name"].(string)
	return e.do(t, "POST", "/v1/mcp", ingesttest.KeyFull, rpc(id, method, params), headers(method, name, nil))
}

// checkProblem holds a problem+json answer to spec 2.7.
func checkProblem(t *testing.T, r response, code string) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("content-type %q, want application/problem+json", ct)
	}
	if v := r.header.Get("X-Content-Type-Options"); v != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", v)
	}
	for _, f := range []string{"type", "title", "status", "code", "retryable", "request_id"} {
		if _, ok := r.json[f]; !ok {
			t.Errorf("problem lacks %s: %s", f, r.body)
		}
	}
	if r.json["code"] != code {
		t.Errorf("code %v, want %s: %s", r.json["code"], code, r.body)
	}
	if s, _ := r.json["status"].(float64); int(s) != r.status {
		t.Errorf("problem status %v, HTTP %d", r.json["status"], r.status)
	}
	if id := r.header.Get("X-Request-Id"); r.json["request_id"] != id || !reqIDPattern.MatchString(id) {
		t.Errorf("request_id %v, header %q", r.json["request_id"], id)
	}
}

// checkRPCError holds a JSON-RPC error answer: its code, and the id echoed
// (wantID is the id's JSON, or "" when none could be read).
func checkRPCError(t *testing.T, r response, code int, wantID string) {
	t.Helper()
	if got, _ := ingesttest.Get(r.json, "error.code").(float64); int(got) != code {
		t.Errorf("error.code %v, want %d: %s", ingesttest.Get(r.json, "error.code"), code, r.body)
	}
	if msg, _ := ingesttest.Get(r.json, "error.message").(string); msg == "" {
		t.Errorf("error without message: %s", r.body)
	}
	if r.json["jsonrpc"] != "2.0" {
		t.Errorf("jsonrpc %v", r.json["jsonrpc"])
	}
	id, ok := r.json["id"]
	switch {
	case wantID == "" && ok:
		t.Errorf("id %v echoed, but none could be read", id)
	case wantID != "":
		b, _ := json.Marshal(id)
		if string(b) != wantID {
			t.Errorf("id %s, want %s", b, wantID)
		}
	}
}

// TestErrorOrder has a row for each check of the fixed order in the package
// comment (the first failing check answers); each row breaks its own check
// and the checks after it, so that passing rows also show the order.
func TestErrorOrder(t *testing.T) {
	e := newEnv(t)
	list := rpc(1, "tools/list", map[string]any{"_meta": meta()})
	noMeta := rpc(1, "tools/list", map[string]any{})
	call := func(id any, name string, args any) string { return rpc(id, "tools/call", callParams(name, args)) }
	b64 := "=?base64?" + base64.StdEncoding.EncodeToString([]byte("whoami")) + "?="
	cases := []struct {
		name     string
		method   string // HTTP method, POST when empty
		key      string // fixture key, KeyFull when empty, "none" for none
		body     string
		hdr      map[string]string
		status   int
		problem  string // problem+json code
		rpcCode  int    // JSON-RPC error code
		id       string // id expected in the error
		combined bool   // the combined Problem and JSON-RPC answer
	}{
		// 1. Not POST: 405 before anything else.
		{name: "GET", method: "GET", status: 405, problem: "METHOD_NOT_ALLOWED"},
		{name: "GET with bad origin and no key", method: "GET", key: "none", hdr: map[string]string{"Origin": "http://evil.example.com"}, status: 405, problem: "METHOD_NOT_ALLOWED"},
		{name: "DELETE", method: "DELETE", body: list, status: 405, problem: "METHOD_NOT_ALLOWED"},
		{name: "PUT", method: "PUT", body: list, status: 405, problem: "METHOD_NOT_ALLOWED"},
		// 2. Origin: 403 before the key is looked at.
		{name: "foreign origin, no key", key: "none", body: "{", hdr: map[string]string{"Origin": "http://evil.example.com"}, status: 403, problem: "FORBIDDEN"},
		{name: "origin null", body: list, hdr: headers("tools/list", "", map[string]string{"Origin": "null"}), status: 403, problem: "FORBIDDEN"},
		{name: "origin look-alike", body: list, hdr: headers("tools/list", "", map[string]string{"Origin": "http://localhost.evil.example.com"}), status: 403, problem: "FORBIDDEN"},
		{name: "configured origin, other scheme", body: list, hdr: headers("tools/list", "", map[string]string{"Origin": "http://app.example.com"}), status: 403, problem: "FORBIDDEN"},
		{name: "origin localhost", body: list, hdr: headers("tools/list", "", map[string]string{"Origin": "http://localhost:5173"}), status: 200},
		{name: "origin 127.0.0.1", body: list, hdr: headers("tools/list", "", map[string]string{"Origin": "http://127.0.0.1"}), status: 200},
		{name: "origin 127.1.2.3", body: list, hdr: headers("tools/list", "", map[string]string{"Origin": "https://127.1.2.3:8443"}), status: 200},
		{name: "origin [::1]", body: list, hdr: headers("tools/list", "", map[string]string{"Origin": "http://[::1]:8080"}), status: 200},
		{name: "configured origin", body: list, hdr: headers("tools/list", "", map[string]string{"Origin": "HTTPS://App.Example.com"}), status: 200},
		// 3. The key: 401 before the body is read; then the mcp scope.
		{name: "no key, body not JSON", key: "none", body: "{", status: 401, problem: "UNAUTHENTICATED"},
		{name: "bad key", key: "none", body: list, hdr: headers("tools/list", "", map[string]string{"Authorization": "Bearer pds_nope"}), status: 401, problem: "UNAUTHENTICATED"},
		{name: "not bearer", key: "none", body: list, hdr: headers("tools/list", "", map[string]string{"Authorization": "Basic eDp5"}), status: 401, problem: "UNAUTHENTICATED"},
		{name: "key without mcp scope", key: ingesttest.KeyReadOnly, body: "{", status: 403, problem: "FORBIDDEN"},
		{name: "body too large", body: `{"x":"` + strings.Repeat("a", 1<<20) + `"}`, status: 413, problem: "PAYLOAD_TOO_LARGE"},
		// 4. Body not JSON: -32700, before the envelope and the headers.
		{name: "not JSON", body: `{"jsonrpc":"2.0","id":1,`, status: 400, rpcCode: -32700},
		{name: "empty body", body: "", status: 400, rpcCode: -32700},
		// 5. Not a single JSON-RPC 2.0 request: -32600, id echoed when readable.
		{name: "batch", body: "[" + list + "]", status: 400, rpcCode: -32600},
		{name: "not an object", body: `"tools/list"`, status: 400, rpcCode: -32600},
		{name: "jsonrpc 1.0", body: `{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, status: 400, rpcCode: -32600, id: "7"},
		{name: "no jsonrpc", body: `{"id":"x","method":"tools/list"}`, status: 400, rpcCode: -32600, id: `"x"`},
		{name: "id null", body: `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, status: 400, rpcCode: -32600},
		{name: "id an object", body: `{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, status: 400, rpcCode: -32600},
		{name: "id a fraction", body: `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, status: 400, rpcCode: -32600},
		{name: "no method", body: `{"jsonrpc":"2.0","id":"a"}`, status: 400, rpcCode: -32600, id: `"a"`},
		{name: "method not a string", body: `{"jsonrpc":"2.0","id":3,"method":5}`, status: 400, rpcCode: -32600, id: "3"},
		// 6. A notification: 202 before the headers are checked.
		{name: "notification without headers", body: rpc(nil, "notifications/initialized", nil), status: 202},
		{name: "notification", body: rpc(nil, "notifications/cancelled", map[string]any{"_meta": meta()}), hdr: headers("notifications/cancelled", "", nil), status: 202},
		// 7. Headers: -32020.
		{name: "no protocol version header", body: noMeta, hdr: headers("tools/list", "", map[string]string{"Mcp-Protocol-Version": "-"}), status: 400, rpcCode: -32020, id: "1"},
		{name: "no Mcp-Method", body: noMeta, hdr: headers("tools/list", "", map[string]string{"Mcp-Method": "-"}), status: 400, rpcCode: -32020, id: "1"},
		{name: "Mcp-Method mismatch", body: list, hdr: headers("prompts/list", "", nil), status: 400, rpcCode: -32020, id: "1"},
		{name: "Mcp-Method case differs", body: list, hdr: headers("TOOLS/LIST", "", nil), status: 400, rpcCode: -32020, id: "1"},
		{name: "no Mcp-Name on tools/call", body: call(2, "whoami", nil), hdr: headers("tools/call", "", nil), status: 400, rpcCode: -32020, id: "2"},
		{name: "Mcp-Name mismatch", body: call(2, "whoami", nil), hdr: headers("tools/call", "get_product", nil), status: 400, rpcCode: -32020, id: "2"},
		{name: "Mcp-Name bad base64", body: call(2, "whoami", nil), hdr: headers("tools/call", "=?base64?***?=", nil), status: 400, rpcCode: -32020, id: "2"},
		{name: "mismatch before unsupported version", body: list, hdr: headers("prompts/list", "", map[string]string{"Mcp-Protocol-Version": "2025-06-18"}), status: 400, rpcCode: -32020, id: "1"},
		{name: "header names in lower case", body: list, hdr: map[string]string{"mcp-protocol-version": mcp.ProtocolVersion, "mcp-method": "tools/list"}, status: 200},
		{name: "header names in upper case", body: list, hdr: map[string]string{"MCP-PROTOCOL-VERSION": mcp.ProtocolVersion, "MCP-METHOD": "tools/list"}, status: 200},
		{name: "Mcp-Name with spaces around", body: call(2, "whoami", nil), hdr: headers("tools/call", "  whoami  ", nil), status: 200},
		{name: "Mcp-Name in base64", body: call(2, "whoami", nil), hdr: headers("tools/call", b64, nil), status: 200},
		// 8. Unsupported version: the combined answer, before _meta.
		{name: "unsupported version", body: rpc("v", "tools/list", map[string]any{}), hdr: headers("tools/list", "", map[string]string{"Mcp-Protocol-Version": "2025-06-18"}), status: 400, rpcCode: -32022, id: `"v"`, combined: true},
		{name: "unknown version", body: rpc(9, "server/discover", nil), hdr: headers("server/discover", "", map[string]string{"Mcp-Protocol-Version": "v999.0.0"}), status: 400, rpcCode: -32022, id: "9", combined: true},
		// 9. Other methods: 404, -32601, before _meta.
		{name: "initialize", body: rpc(4, "initialize", map[string]any{"protocolVersion": "2025-06-18"}), hdr: headers("initialize", "", nil), status: 404, rpcCode: -32601, id: "4"},
		{name: "ping", body: rpc(4, "ping", map[string]any{"_meta": meta()}), hdr: headers("ping", "", nil), status: 404, rpcCode: -32601, id: "4"},
		{name: "prompts/list", body: rpc(4, "prompts/list", map[string]any{"_meta": meta()}), hdr: headers("prompts/list", "", nil), status: 404, rpcCode: -32601, id: "4"},
		{name: "resources/list", body: rpc(4, "resources/list", map[string]any{"_meta": meta()}), hdr: headers("resources/list", "", nil), status: 404, rpcCode: -32601, id: "4"},
		{name: "subscriptions/listen", body: rpc(4, "subscriptions/listen", map[string]any{"_meta": meta()}), hdr: headers("subscriptions/listen", "", nil), status: 404, rpcCode: -32601, id: "4"},
		// 10. params._meta: -32602; a _meta version other than the header's: -32020.
		{name: "no params", body: rpc(5, "server/discover", nil), hdr: headers("server/discover", "", nil), status: 400, rpcCode: -32602, id: "5"},
		{name: "params an array", body: `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[]}`, hdr: headers("tools/list", "", nil), status: 400, rpcCode: -32602, id: "5"},
		{name: "no _meta", body: rpc(5, "server/discover", map[string]any{}), hdr: headers("server/discover", "", nil), status: 400, rpcCode: -32602, id: "5"},
		{name: "_meta not an object", body: rpc(5, "tools/list", map[string]any{"_meta": "x"}), hdr: headers("tools/list", "", nil), status: 400, rpcCode: -32602, id: "5"},
		{name: "_meta without protocolVersion", body: rpc(5, "tools/list", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{}}}), hdr: headers("tools/list", "", nil), status: 400, rpcCode: -32602, id: "5"},
		{name: "_meta without clientCapabilities", body: rpc(5, "tools/list", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": mcp.ProtocolVersion}}), hdr: headers("tools/list", "", nil), status: 400, rpcCode: -32602, id: "5"},
		{name: "_meta without clientInfo is fine", body: rpc(5, "server/discover", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": mcp.ProtocolVersion, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}), hdr: headers("server/discover", "", nil), status: 200},
		{name: "_meta version differs from header", body: rpc(5, "server/discover", map[string]any{"_meta": mergeMap(meta(), map[string]any{"io.modelcontextprotocol/protocolVersion": "v999.0.0"})}), hdr: headers("server/discover", "", nil), status: 400, rpcCode: -32020, id: "5"},
		// 11. tools/call: unknown tool, arguments not an object: -32602.
		{name: "unknown tool", body: call(6, "get_weather", map[string]any{}), hdr: headers("tools/call", "get_weather", nil), status: 400, rpcCode: -32602, id: "6"},
		{name: "no tool name", body: rpc(6, "tools/call", map[string]any{"_meta": meta(), "arguments": map[string]any{}}), hdr: headers("tools/call", "whoami", nil), status: 400, rpcCode: -32602, id: "6"},
		{name: "tool name not a string", body: rpc(6, "tools/call", map[string]any{"_meta": meta(), "name": 3}), hdr: headers("tools/call", "3", nil), status: 400, rpcCode: -32602, id: "6"},
		{name: "arguments an array", body: call(6, "whoami", []any{}), hdr: headers("tools/call", "whoami", nil), status: 400, rpcCode: -32602, id: "6"},
		{name: "arguments a string", body: call(6, "whoami", "{}"), hdr: headers("tools/call", "whoami", nil), status: 400, rpcCode: -32602, id: "6"},
		{name: "arguments null", body: `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"whoami","arguments":null,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, hdr: headers("tools/call", "whoami", nil), status: 400, rpcCode: -32602, id: "6"},
		{name: "arguments left out", body: call(6, "whoami", nil), hdr: headers("tools/call", "whoami", nil), status: 200},
		// Ids of every allowed kind are echoed.
		{name: "string id echoed", body: rpc("abc-1", "nope", map[string]any{}), hdr: headers("nope", "", nil), status: 404, rpcCode: -32601, id: `"abc-1"`},
		{name: "negative id echoed", body: rpc(-42, "nope", map[string]any{}), hdr: headers("nope", "", nil), status: 404, rpcCode: -32601, id: "-42"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method := c.method
			if method == "" {
				method = "POST"
			}
			key := c.key
			switch key {
			case "":
				key = ingesttest.KeyFull
			case "none":
				key = ""
			}
			r := e.do(t, method, "/v1/mcp", key, c.body, c.hdr)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if !reqIDPattern.MatchString(r.header.Get("X-Request-Id")) {
				t.Errorf("x-request-id %q", r.header.Get("X-Request-Id"))
			}
			switch {
			case c.problem != "":
				checkProblem(t, r, c.problem)
			case c.combined:
				checkProblem(t, r, "UNSUPPORTED_PROTOCOL_VERSION")
				checkRPCError(t, r, c.rpcCode, c.id)
				if r.json["retryable"] != false || r.json["status"] != 400.0 {
					t.Errorf("retryable %v, status %v", r.json["retryable"], r.json["status"])
				}
				if got := ingesttest.Get(r.json, "error.data.supported"); !reflect.DeepEqual(got, []any{mcp.ProtocolVersion}) {
					t.Errorf("error.data.supported %v", got)
				}
				if got := ingesttest.Get(r.json, "error.data.requested"); got != c.hdr["Mcp-Protocol-Version"] {
					t.Errorf("error.data.requested %v", got)
				}
			case c.rpcCode != 0:
				if ct := r.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("content-type %q", ct)
				}
				checkRPCError(t, r, c.rpcCode, c.id)
				if c.rpcCode == -32601 && !reflect.DeepEqual(ingesttest.Get(r.json, "error.data.supported"), []any{mcp.ProtocolVersion}) {
					t.Errorf("method not found does not name the supported version: %s", r.body)
				}
			case c.status == 202:
				if len(r.body) != 0 {
					t.Errorf("202 with a body: %s", r.body)
				}
			case c.status == 200:
				if r.json["result"] == nil || r.json["error"] != nil {
					t.Errorf("no result: %s", r.body)
				}
			}
			switch r.status {
			case 401:
				if r.header.Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
			case 405:
				if r.header.Get("Allow") != "POST" {
					t.Errorf("Allow %q", r.header.Get("Allow"))
				}
			}
		})
	}
}

func mergeMap(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

var toolNames = []string{"validate_identifier", "resolve_identifiers", "get_product", "get_passport", "get_evidence",
	"search_products", "parse_digital_link", "get_source", "whoami"}

func TestDiscover(t *testing.T) {
	e := newEnv(t)
	r := e.post(t, 1, "server/discover", map[string]any{"_meta": meta()})
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	want := map[string]any{
		"result.resultType":          "complete",
		"result.supportedVersions.0": mcp.ProtocolVersion,
		"result.cacheScope":          "public",
	}
	for path, v := range want {
		if got := ingesttest.Get(r.json, path); got != v {
			t.Errorf("%s = %v, want %v", path, got, v)
		}
	}
	res := r.json["result"].(map[string]any)
	if _, ok := ingesttest.Get(res, "capabilities.tools").(map[string]any); !ok {
		t.Errorf("capabilities.tools missing: %s", r.body)
	}
	if ttl, ok := res["ttlMs"].(float64); !ok || ttl < 0 || ttl != float64(int64(ttl)) {
		t.Errorf("ttlMs %v", res["ttlMs"])
	}
	info, _ := res["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"].(map[string]any)
	if info["name"] != "pds" || info["version"] == "" || info["version"] == nil {
		t.Errorf("serverInfo %v", info)
	}
	if r.json["id"] != 1.0 || r.json["jsonrpc"] != "2.0" {
		t.Errorf("envelope %s", r.body)
	}
}

// listTools returns the tools of tools/list by name.
func listTools(t *testing.T, e *env) (map[string]map[string]any, []byte) {
	t.Helper()
	r := e.post(t, 1, "tools/list", map[string]any{"_meta": meta()})
	if r.status != 200 {
		t.Fatalf("tools/list: %d %s", r.status, r.body)
	}
	out := map[string]map[string]any{}
	for _, tl := range ingesttest.Get(r.json, "result.tools").([]any) {
		m := tl.(map[string]any)
		out[m["name"].(string)] = m
	}
	return out, r.body
}

func TestToolsList(t *testing.T) {
	e := newEnv(t)
	r := e.post(t, 1, "tools/list", map[string]any{"_meta": meta()})
	res := r.json["result"].(map[string]any)
	if res["resultType"] != "complete" || res["cacheScope"] != "public" {
		t.Errorf("resultType %v, cacheScope %v", res["resultType"], res["cacheScope"])
	}
	if ttl, ok := res["ttlMs"].(float64); !ok || ttl < 0 || ttl != float64(int64(ttl)) {
		t.Errorf("ttlMs %v", res["ttlMs"])
	}
	if _, ok := res["nextCursor"]; ok {
		t.Error("nextCursor present: every tool must be in one page")
	}
	checkToolsGolden(t, r.body)
	tools := res["tools"].([]any)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	if !reflect.DeepEqual(names, toolNames) {
		t.Fatalf("tools %v, want %v in that order", names, toolNames)
	}
	// The order and content are the same on every call.
	for i := 0; i < 2; i++ {
		again := e.post(t, 2, "tools/list", map[string]any{"_meta": meta()})
		if !bytes.Equal(bytes.Replace(again.body, []byte(`"id":2`), []byte(`"id":1`), 1), r.body) {
			t.Fatal("tools/list differs between calls")
		}
	}
	for _, tl := range tools {
		m := tl.(map[string]any)
		name := m["name"].(string)
		t.Run(name, func(t *testing.T) {
			if title, _ := m["title"].(string); title == "" {
				t.Error("no title")
			}
			if d, _ := m["description"].(string); len(d) < 150 {
				t.Errorf("description too thin for a model to act on: %q", d)
			}
			if a := m["annotations"]; !reflect.DeepEqual(a, map[string]any{"readOnlyHint": true, "openWorldHint": false}) {
				t.Errorf("annotations %v", a)
			}
			in := m["inputSchema"].(map[string]any)
			if in["type"] != "object" || in["additionalProperties"] != false {
				t.Errorf("inputSchema type %v, additionalProperties %v", in["type"], in["additionalProperties"])
			}
			for _, bad := range checkKeywords(in, "inputSchema") {
				t.Error(bad)
			}
			for pname, p := range in["properties"].(map[string]any) {
				ps := p.(map[string]any)
				if d, _ := ps["description"].(string); len(d) < 20 {
					t.Errorf("property %s is not described", pname)
				}
				if ps["type"] == "string" && ps["enum"] == nil && ps["maxLength"] == nil && ps["pattern"] == nil && ps["format"] == nil && pname != "cursor" {
					t.Errorf("string property %s has no enum, pattern, format or bound", pname)
				}
			}
			out, ok := m["outputSchema"].(map[string]any)
			if !ok || out["type"] != "object" {
				t.Fatalf("outputSchema %v", m["outputSchema"])
			}
			for _, bad := range checkKeywords(out, "outputSchema") {
				t.Error(bad)
			}
			for _, f := range []string{"request_id", "status", "meta"} {
				if !containsAny(out["required"], f) {
					t.Errorf("outputSchema does not require %s", f)
				}
			}
		})
	}
}

func containsAny(list any, s string) bool {
	l, _ := list.([]any)
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

var update = flag.Bool("update", false, "rewrite testdata/tools-list.json")

// checkToolsGolden holds the tools/list result, the contract agents see, to
// testdata/tools-list.json (go test -update rewrites it).
func checkToolsGolden(t *testing.T, body []byte) {
	t.Helper()
	var msg struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := json.Indent(&got, msg.Result, "", "  "); err != nil {
		t.Fatal(err)
	}
	got.WriteByte('\n')
	path := filepath.Join("testdata", "tools-list.json")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("tools/list differs from %s (go test -update to accept the new contract):\n%s", path, got.Bytes())
	}
}
