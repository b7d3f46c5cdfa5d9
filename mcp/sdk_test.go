package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/mcp"
)

// bearer is the SDK client's HTTP transport: it adds the API key, as a
// deployment's HTTP client would, and records what went over the wire.
type bearer struct {
	key string
	mu  sync.Mutex
	log []exchange
}

type exchange struct {
	method, version string // Mcp-Method and MCP-Protocol-Version sent
	status          int
	contentType     string
	body            []byte
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.key)
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	b.mu.Lock()
	b.log = append(b.log, exchange{method: req.Header.Get("Mcp-Method"), version: req.Header.Get("Mcp-Protocol-Version"),
		status: res.StatusCode, contentType: res.Header.Get("Content-Type"), body: body})
	b.mu.Unlock()
	return res, nil
}

func (b *bearer) exchanges() []exchange {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]exchange(nil), b.log...)
}

func connect(t *testing.T, e *env, version string) (*sdk.ClientSession, *bearer) {
	t.Helper()
	rt := &bearer{key: e.keys[ingesttest.KeyFull]}
	client := sdk.NewClient(&sdk.Implementation{Name: "pds-test", Version: "1.0.0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	var opts *sdk.ClientSessionOptions
	if version != "" {
		opts = &sdk.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.url + "/v1/mcp", HTTPClient: &http.Client{Transport: rt}}, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, rt
}

// TestSDKClient uses the official Go SDK's client: it calls server/discover
// first, lists the tools and calls each one.
func TestSDKClient(t *testing.T) {
	e := newEnv(t)
	cs, rt := connect(t, e, "")
	ctx := context.Background()
	if v := cs.InitializeResult().ProtocolVersion; v != mcp.ProtocolVersion {
		t.Fatalf("negotiated %q", v)
	}
	if info := cs.InitializeResult().ServerInfo; info == nil || info.Name != "pds" {
		t.Errorf("server info %+v", info)
	}
	if ex := rt.exchanges(); len(ex) == 0 || ex[0].method != "server/discover" || ex[0].status != 200 {
		t.Fatalf("the client did not start with a successful server/discover: %+v", ex)
	}

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Annotations == nil || !tl.Annotations.ReadOnlyHint || tl.Annotations.OpenWorldHint == nil || *tl.Annotations.OpenWorldHint {
			t.Errorf("%s: annotations %+v", tl.Name, tl.Annotations)
		}
		if tl.OutputSchema == nil || tl.Title == "" {
			t.Errorf("%s: no outputSchema or title", tl.Name)
		}
	}
	if !reflect.DeepEqual(names, toolNames) {
		t.Fatalf("tools %v", names)
	}

	calls := map[string]map[string]any{
		"validate_identifier": {"value": demo},
		"resolve_identifiers": {"identifiers": []string{demo, absent, "bad!"}},
		"get_product":         {"identifier": demoSub},
		"get_passport":        {"identifier": demo},
		"get_evidence":        {"identifier": demo},
		"search_products":     {"manufacturer": "Demo Foods", "limit": 5},
		"parse_digital_link":  {"uri": "https://id.gs1.org/01/09520123456788/10/ABC123"},
		"get_source":          {"source_id": srcReg},
		"whoami":              {},
	}
	for _, name := range toolNames {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: calls[name]})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if res.IsError {
			t.Errorf("%s failed: %v", name, text(res))
			continue
		}
		env, ok := res.StructuredContent.(map[string]any)
		if !ok || !reqIDPattern.MatchString(env["request_id"].(string)) {
			t.Errorf("%s: structuredContent %v", name, res.StructuredContent)
			continue
		}
		var fromText map[string]any
		if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil || !reflect.DeepEqual(fromText, env) {
			t.Errorf("%s: text block differs from structuredContent", name)
		}
	}

	// A failing operation is a result the client hands on, not a Go error.
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_product", Arguments: map[string]any{"identifier": "09520123456789"}})
	if err != nil || !res.IsError || res.StructuredContent != nil || !strings.Contains(text(res), "INVALID_IDENTIFIER") {
		t.Errorf("failing call: %v %+v", err, res)
	}
	// An unknown tool is a protocol error.
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_weather"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("unknown tool: %v", err)
	}
	for _, ex := range rt.exchanges() {
		if ex.version != mcp.ProtocolVersion {
			t.Errorf("%s sent with MCP-Protocol-Version %q", ex.method, ex.version)
		}
	}
}

// TestSDKClientRenegotiates: a client asking for a version pds does not
// speak reads the combined problem+json answer, picks the supported version
// from error.data.supported and carries on.
func TestSDKClientRenegotiates(t *testing.T) {
	e := newEnv(t)
	cs, rt := connect(t, e, "2099-01-01")
	if v := cs.InitializeResult().ProtocolVersion; v != mcp.ProtocolVersion {
		t.Fatalf("negotiated %q", v)
	}
	ex := rt.exchanges()
	if len(ex) < 2 {
		t.Fatalf("exchanges %+v", ex)
	}
	first, second := ex[0], ex[1]
	if first.method != "server/discover" || first.version != "2099-01-01" || first.status != 400 || first.contentType != "application/problem+json" {
		t.Errorf("first exchange %+v %s", first, first.body)
	}
	var combined map[string]any
	json.Unmarshal(first.body, &combined)
	if combined["code"] != "UNSUPPORTED_PROTOCOL_VERSION" || ingesttest.Get(combined, "error.code") != -32022.0 {
		t.Errorf("first answer %s", first.body)
	}
	if second.method != "server/discover" || second.version != mcp.ProtocolVersion || second.status != 200 {
		t.Errorf("second exchange %+v %s", second, second.body)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami"})
	if err != nil || res.IsError {
		t.Fatalf("whoami after renegotiation: %v %+v", err, res)
	}
}

func text(res *sdk.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*sdk.TextContent); ok {
		return tc.Text
	}
	return ""
}
