package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/mcp"
	"github.com/productdata/pds/mcp/stdio"
	"github.com/productdata/pds/service"
)

// The protocol revisions the SDK server of pds mcp negotiates: every one the
// hosts of today speak, and the one /v1/mcp speaks.
var sdkVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

type sdkEnv struct {
	*env
	svc *service.Service
}

func newSDKEnv(t *testing.T) *sdkEnv {
	t.Helper()
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	svc, secrets := ingesttest.Service(t, snap)
	return &sdkEnv{env: serve(t, svc, secrets), svc: svc}
}

// connectSDK runs srv on an in-memory pipe and connects the SDK's client to
// it, asking for version.
func connectSDK(t *testing.T, srv *sdk.Server, version string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "pds-test", Version: "1"}, nil).Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// localServer is pds mcp --snapshot's server, calling as the given key so
// that its answers can be compared with /v1/mcp's to the same key.
func (e *sdkEnv) localServer(t *testing.T, key string) *sdk.Server {
	c, err := e.svc.Authenticate("Bearer " + e.keys[key])
	if err != nil {
		t.Fatal(err)
	}
	return mcp.NewLocalServer(e.svc, c, ingesttest.Logger(t))
}

// remoteServer is pds mcp --url's server, forwarding to e's /v1/mcp.
func (e *sdkEnv) remoteServer(t *testing.T, key string) *sdk.Server {
	srv, closeRemote, err := mcp.NewRemoteServer(context.Background(), e.url, e.keys[key], ingesttest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeRemote() })
	return srv
}

// TestSDKServerNegotiates: the SDK server answers initialize at every
// revision hosts speak with that revision, and serves the tools there.
func TestSDKServerNegotiates(t *testing.T) {
	e := newSDKEnv(t)
	for _, backend := range []string{"local", "remote"} {
		for _, v := range sdkVersions {
			t.Run(backend+"/"+v, func(t *testing.T) {
				srv := e.localServer(t, ingesttest.KeyFull)
				if backend == "remote" {
					srv = e.remoteServer(t, ingesttest.KeyFull)
				}
				cs := connectSDK(t, srv, v)
				init := cs.InitializeResult()
				if init.ProtocolVersion != v {
					t.Errorf("negotiated %q, asked for %q", init.ProtocolVersion, v)
				}
				if init.ServerInfo == nil || init.ServerInfo.Name != "pds" || init.Capabilities == nil || init.Capabilities.Tools == nil {
					t.Errorf("initialize result %+v", init)
				}
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "get_product", Arguments: map[string]any{"identifier": demo}})
				if err != nil || res.IsError || ingesttest.Get(res.StructuredContent, "data.subject") != demoSub {
					t.Fatalf("get_product: %v %+v", err, res)
				}
			})
		}
	}
}

// TestSDKServerTools: both backends list the tools of /v1/mcp with the same
// descriptions and schemas, and answer every case of TestTools as /v1/mcp
// answers it; each structuredContent validates against the tool's
// outputSchema, checked with the JSON Schema library the Go SDK uses.
func TestSDKServerTools(t *testing.T) {
	e := newSDKEnv(t)
	want, _ := listTools(t, e.env)
	for _, backend := range []string{"local", "remote"} {
		t.Run(backend, func(t *testing.T) {
			sessions := map[string]*sdk.ClientSession{}
			session := func(key string) *sdk.ClientSession {
				if sessions[key] == nil {
					srv := e.localServer(t, key)
					if backend == "remote" {
						srv = e.remoteServer(t, key)
					}
					sessions[key] = connectSDK(t, srv, "2025-06-18")
				}
				return sessions[key]
			}
			list, err := session(ingesttest.KeyFull).ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			schemas := map[string]*jsonschema.Resolved{}
			for _, tl := range list.Tools {
				w := want[tl.Name]
				if w == nil {
					t.Fatalf("tool %s is not a /v1/mcp tool", tl.Name)
				}
				got := map[string]any{"name": tl.Name, "title": tl.Title, "description": tl.Description,
					"inputSchema": jsonValue(tl.InputSchema), "outputSchema": jsonValue(tl.OutputSchema)}
				for k := range got {
					if !reflect.DeepEqual(got[k], w[k]) {
						t.Errorf("%s: %s differs from /v1/mcp's", tl.Name, k)
					}
				}
				if a := tl.Annotations; a == nil || !a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
					t.Errorf("%s: annotations %+v", tl.Name, a)
				}
				schemas[tl.Name] = resolveSchema(t, tl.OutputSchema)
			}
			if len(list.Tools) != len(toolNames) {
				t.Fatalf("%d tools, want %d", len(list.Tools), len(toolNames))
			}
			for _, c := range toolCases() {
				key := c.key
				if key == "" {
					key = ingesttest.KeyFull
				}
				t.Run(c.tool+"/"+c.name, func(t *testing.T) {
					res, err := session(key).CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
					if err != nil {
						t.Fatal(err)
					}
					r := e.do(t, "POST", "/v1/mcp", key, rpc(1, "tools/call", callParams(c.tool, c.args)), headers("tools/call", c.tool, nil))
					ref := r.json["result"].(map[string]any)
					if res.IsError != (ref["isError"] == true) {
						t.Fatalf("isError %v, /v1/mcp %v: %s", res.IsError, ref["isError"], text(res))
					}
					refText := ingesttest.Get(ref, "content.0.text").(string)
					if res.IsError {
						gotProblem, gotAdvice, _ := strings.Cut(text(res), "\n\n")
						refProblem, refAdvice, _ := strings.Cut(refText, "\n\n")
						var g, w map[string]any
						json.Unmarshal([]byte(gotProblem), &g)
						json.Unmarshal([]byte(refProblem), &w)
						delete(g, "request_id")
						delete(w, "request_id")
						if !reflect.DeepEqual(g, w) || gotAdvice != refAdvice {
							t.Errorf("failure differs from /v1/mcp's:\n%s\n%s", text(res), refText)
						}
						if res.StructuredContent != nil {
							t.Error("a failure carries structuredContent")
						}
						return
					}
					sc := jsonValue(res.StructuredContent).(map[string]any)
					if !reqIDPattern.MatchString(sc["request_id"].(string)) {
						t.Errorf("request_id %v", sc["request_id"])
					}
					var fromText map[string]any
					if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil || !reflect.DeepEqual(fromText, sc) {
						t.Errorf("text block differs from structuredContent: %s", text(res))
					}
					if got, w := withoutVolatile(sc), withoutVolatile(ref["structuredContent"].(map[string]any)); !reflect.DeepEqual(got, w) {
						t.Errorf("structuredContent differs from /v1/mcp's:\n%s\n%s", text(res), refText)
					}
					if err := schemas[c.tool].Validate(jsonValue(res.StructuredContent)); err != nil {
						t.Errorf("structuredContent does not validate against the outputSchema: %v", err)
					}
				})
			}
			// An unknown tool is a protocol error.
			if _, err := session(ingesttest.KeyFull).CallTool(context.Background(), &sdk.CallToolParams{Name: "get_weather"}); err == nil {
				t.Error("unknown tool answered")
			}
		})
	}
}

// resolveSchema reads a tool's outputSchema with github.com/google/jsonschema-go.
func resolveSchema(t *testing.T, schema any) *jsonschema.Resolved {
	t.Helper()
	b, _ := json.Marshal(schema)
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestRemoteServerFailures: a key the remote refuses stops pds mcp --url at
// start; a remote that goes away later makes each call a tool failure that
// says so, not a protocol error.
func TestRemoteServerFailures(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	svc, secrets := ingesttest.Service(t, snap)
	log := ingesttest.Logger(t)
	ts := httptest.NewServer(pdshttp.New(svc, log, mcp.New(svc, log, nil)))
	defer ts.Close()

	ctx := context.Background()
	for _, c := range []struct{ url, key, want string }{
		{ts.URL, "not-a-key", "refused the key: UNAUTHENTICATED"},
		{ts.URL, secrets[ingesttest.KeyReadOnly], "lacks the mcp scope"},
		{ts.URL + "/v1/products", secrets[ingesttest.KeyFull], "is " + ts.URL + "/v1/products the base URL of a pds?"},
		{"http://127.0.0.1:1", secrets[ingesttest.KeyFull], "did not answer"},
	} {
		_, _, err := mcp.NewRemoteServer(ctx, c.url, c.key, log)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.key) {
			t.Errorf("%s with key %q: %v, want an error saying %q without the key", c.url, c.key, err, c.want)
		}
	}
	srv, closeRemote, err := mcp.NewRemoteServer(ctx, ts.URL+"/", secrets[ingesttest.KeyFull], log)
	if err != nil {
		t.Fatal(err)
	}
	defer closeRemote()
	cs := connectSDK(t, srv, "2025-03-26")
	ts.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "SERVICE_UNAVAILABLE") || !strings.Contains(text(res), "did not answer") {
		t.Fatalf("call to a remote that is gone: %v %+v", err, res)
	}
}

// TestStdioEndOfInput: requests piped in and followed at once by the end of
// input are all answered before the session ends (the SDK's own stdio
// transport answers none of them).
func TestStdioEndOfInput(t *testing.T) {
	e := newSDKEnv(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_product","arguments":{"identifier":"` + demo + `"}}}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"resolve_identifiers","arguments":{"identifiers":["` + demo + `","` + absent + `"]}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.localServer(t, ingesttest.KeyFull).Run(ctx, stdio.New(strings.NewReader(in), &out, nil)); err != nil && ctx.Err() != nil {
		t.Fatalf("run: %v", err)
	}
	answers := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		answers[fmt.Sprint(m["id"])] = m
	}
	if len(answers) != 4 {
		t.Fatalf("%d answers, want 4:\n%s", len(answers), out.String())
	}
	if ingesttest.Get(answers["2"], "result.structuredContent.status") != "found" ||
		ingesttest.Get(answers["three"], "result.structuredContent.status") != "partial" ||
		len(ingesttest.Get(answers["4"], "result.tools").([]any)) != len(toolNames) {
		t.Errorf("answers:\n%s", out.String())
	}
}
