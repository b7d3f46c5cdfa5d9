package mcp_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/internal/fuzzseed"
	"github.com/productdata/pds/mcp"
)

// FuzzMCP sends arbitrary bodies and MCP headers through the real MCP
// handler (in process) over a real snapshot: every answer is JSON (a
// JSON-RPC response or a problem) or an empty 202, never a 500 or a panic.
//
//	go test -run '^$' -fuzz '^FuzzMCP$' -fuzztime 10m ./mcp/
func FuzzMCP(f *testing.F) {
	snap := ingesttest.Build(f, ingesttest.WriteCase(f, ingesttest.CaseFile("passport")))
	svc, secrets := ingesttest.Service(f, snap)
	h := mcp.New(svc, ingesttest.Logger(f), nil)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	seeds := []struct{ body, version, method, name string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`, "2026-07-28", "tools/list", ""},
		{`{"jsonrpc":"2.0","id":"a","method":"server/discover","params":{` + meta + `}}`, "2026-07-28", "server/discover", ""},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_passport","arguments":{"identifier":"09520123456788"},` + meta + `}}`, "2026-07-28", "tools/call", "get_passport"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"resolve_identifiers","arguments":{"identifiers":["x",1]},` + meta + `}}`, "2026-07-28", "tools/call", "resolve_identifiers"},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_products","arguments":{"manufacturer":"demo","limit":200},` + meta + `}}`, "2026-07-28", "tools/call", "search_products"},
		{`{"jsonrpc":"2.0","method":"notifications/x"}`, "2026-07-28", "", ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, "2026-07-28", "tools/list", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, "1999-01-01", "tools/list", ""},
		{`{"id":null}`, "", "", ""},
	}
	var all [][]any
	for _, s := range seeds {
		all = append(all, []any{s.body, s.version, s.method, s.name})
	}
	fuzzseed.Seed(f, all...)
	f.Fuzz(func(t *testing.T, body, version, method, name string) {
		req := httptest.NewRequest(http.MethodPost, "/v1/mcp", bytes.NewReader([]byte(body)))
		req.Header.Set("Authorization", "Bearer "+secrets[ingesttest.KeyFull])
		req.Header.Set("Content-Type", "application/json")
		for k, v := range map[string]string{"MCP-Protocol-Version": version, "Mcp-Method": method, "Mcp-Name": name} {
			if v != "" && validHeader(v) {
				req.Header.Set(k, v)
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%q: %d %s", body, rec.Code, rec.Body.Bytes())
		}
		if rec.Code == http.StatusAccepted {
			if rec.Body.Len() != 0 {
				t.Fatalf("202 with a body: %q", rec.Body.Bytes())
			}
			return
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%q: answer is not JSON: %q", body, rec.Body.Bytes())
		}
	})
}

// validHeader reports whether v can be sent as an HTTP header value.
func validHeader(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}
