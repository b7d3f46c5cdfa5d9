package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/mcp"
)

// stdioCalls call every tool once, successfully, on the passport test case.
var stdioCalls = []struct {
	name string
	args map[string]any
}{
	{"validate_identifier", map[string]any{"value": "09520123456788"}},
	{"resolve_identifiers", map[string]any{"identifiers": []string{"09520123456788", "gtin:09520000000028", "bad!"}}},
	{"get_product", map[string]any{"identifier": "gtin:09520123456788"}},
	{"get_passport", map[string]any{"identifier": "09520123456788"}},
	{"get_evidence", map[string]any{"identifier": "09520123456788"}},
	{"search_products", map[string]any{"manufacturer": "Demo Foods", "limit": 5}},
	{"parse_digital_link", map[string]any{"uri": "https://id.gs1.org/01/09520123456788/10/ABC123"}},
	{"get_source", map[string]any{"source_id": "11111111-0000-4000-8000-000000000001"}},
	{"whoami", map[string]any{}},
}

// pdsCommand is this test binary running pds with args, as TestMain does.
func pdsCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join(args, "\n"))
	return cmd
}

// TestStdioHostsCallEveryTool: hosts of today start
// pds mcp as a subprocess and talk MCP over its stdin and stdout. The Go
// SDK's CommandTransport and the TypeScript SDK 1.x client (as Claude
// Desktop and VS Code use it) each negotiate a revision before 2026-07-28,
// list the nine tools and call every one; the TypeScript client validates
// each structuredContent against the tool's outputSchema.
func TestStdioHostsCallEveryTool(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))

	t.Run("go-sdk/snapshot", func(t *testing.T) {
		checkGoStdio(t, pdsCommand("mcp", "--snapshot", snap), "local", "")
	})
	t.Run("go-sdk/url", func(t *testing.T) {
		s, secrets := ingesttest.Service(t, snap)
		log := ingesttest.Logger(t)
		ts := httptest.NewServer(pdshttp.New(s, log, mcp.New(s, log, nil)))
		defer ts.Close()
		cmd := pdsCommand("mcp", "--url", ts.URL)
		cmd.Env = append(cmd.Env, apiKeyEnv+"="+secrets[ingesttest.KeyFull])
		checkGoStdio(t, cmd, "public-co", secrets[ingesttest.KeyFull])
	})
	t.Run("typescript-sdk/snapshot", func(t *testing.T) {
		checkTSStdio(t, snap)
	})
	// What docs/mcp.md shows: requests piped in, every one answered, exit 0;
	// with --tenant, that tenant's own records are visible.
	t.Run("pipe", func(t *testing.T) {
		cmd := pdsCommand("mcp", "--snapshot", snap, "--tenant", "acme")
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_product","arguments":{"identifier":"internal_sku:ACME-7"}}}
`)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %s", err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], `"protocolVersion":"2024-11-05"`) || !strings.Contains(lines[1], `"status":"found"`) {
			t.Errorf("stdout:\n%s", out)
		}
	})
}

// checkGoStdio runs cmd with the Go SDK's CommandTransport; whoami must
// name tenant, and stderr (the log) must not show secret.
func checkGoStdio(t *testing.T, cmd *exec.Cmd, tenant, secret string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "pds-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-06-18" {
		t.Errorf("negotiated %q", v)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	checkToolNames(t, names)
	for _, c := range stdioCalls {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.name, Arguments: c.args})
		if err != nil || res.IsError {
			t.Errorf("%s: %v %+v", c.name, err, res)
			continue
		}
		checkStructured(t, c.name, jsonOf(t, res.StructuredContent), tenant)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_product", Arguments: map[string]any{"identifier": "09520123456789"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "INVALID_IDENTIFIER") {
		t.Errorf("failing call: %v %+v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if secret != "" && strings.Contains(stderr.String(), secret) {
		t.Errorf("the log shows the key: %s", stderr.String())
	}
}

// checkTSStdio runs the TypeScript SDK 1.x client (mcp/testdata/tsclient)
// against pds mcp --snapshot.
func checkTSStdio(t *testing.T, snap string) {
	t.Helper()
	root := ingesttest.Root()
	out, err := exec.Command("bash", filepath.Join(root, "scripts", "mcp-ts-client.sh")).Output()
	if err != nil {
		t.Fatalf("scripts/mcp-ts-client.sh could not install node and the TypeScript MCP SDK (%v); the test needs them: %s", err, exitStderr(err))
	}
	sdkDir := strings.TrimSpace(string(out))
	type call struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	var calls []call
	for _, c := range stdioCalls {
		calls = append(calls, call{c.name, c.args})
	}
	calls = append(calls, call{"get_product", map[string]any{"identifier": "09520123456789"}})
	callsFile := filepath.Join(t.TempDir(), "calls.json")
	b, _ := json.Marshal(calls)
	if err := os.WriteFile(callsFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	pds := pdsCommand("mcp", "--snapshot", snap)
	cmd := exec.Command("node", append([]string{filepath.Join(root, "mcp", "testdata", "tsclient", "client.cjs"), sdkDir, callsFile}, pds.Args...)...)
	cmd.Env = pds.Env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, stderr.String())
	}
	var got struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Results []struct {
			IsError           bool             `json:"isError"`
			StructuredContent map[string]any   `json:"structuredContent"`
			Content           []map[string]any `json:"content"`
		} `json:"results"`
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("TypeScript client output: %v\n%s", err, stdout)
	}
	if got.ProtocolVersion != "2025-11-25" || got.ServerInfo.Name != "pds" {
		t.Errorf("negotiated %q with %q", got.ProtocolVersion, got.ServerInfo.Name)
	}
	var names []string
	for _, tl := range got.Tools {
		names = append(names, tl.Name)
	}
	checkToolNames(t, names)
	if len(got.Results) != len(calls) {
		t.Fatalf("%d results for %d calls", len(got.Results), len(calls))
	}
	for i, c := range stdioCalls {
		r := got.Results[i]
		if r.IsError {
			t.Errorf("%s failed: %v", c.name, r.Content)
			continue
		}
		checkStructured(t, c.name, r.StructuredContent, "local")
	}
	last := got.Results[len(calls)-1]
	if !last.IsError || last.StructuredContent != nil || !strings.Contains(last.Content[0]["text"].(string), "INVALID_IDENTIFIER") {
		t.Errorf("failing call: %+v", last)
	}
}

func checkToolNames(t *testing.T, names []string) {
	t.Helper()
	var want []string
	for _, c := range stdioCalls {
		want = append(want, c.name)
	}
	slices.Sort(names)
	slices.Sort(want)
	if !reflect.DeepEqual(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// checkStructured checks the envelope of a successful call.
func checkStructured(t *testing.T, tool string, env map[string]any, tenant string) {
	t.Helper()
	if env["status"] == nil || env["request_id"] == nil || env["meta"] == nil {
		t.Errorf("%s: structuredContent %v", tool, env)
	}
	if tool == "whoami" && ingesttest.Get(env, "data.tenant") != tenant {
		t.Errorf("whoami tenant %v, want %s", ingesttest.Get(env, "data.tenant"), tenant)
	}
	if tool == "get_product" && ingesttest.Get(env, "data.subject") != "gtin:09520123456788" {
		t.Errorf("get_product %v", env)
	}
}

func jsonOf(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
