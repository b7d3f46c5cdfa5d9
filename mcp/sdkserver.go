package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/internal/buildinfo"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
)

// The endpoint above (/v1/mcp) speaks only the stateless revision
// 2026-07-28. Hosts of today (the TypeScript SDK 1.x among them) start a
// stdio server and negotiate an earlier revision with initialize.
// NewLocalServer and NewRemoteServer make such a
// server with the official Go SDK, which does the negotiation, from the same
// tool table: the same names, descriptions and schemas, and the same answers.

// NewLocalServer returns an MCP server that serves the tools by running svc's
// operations as caller c, exactly as /v1/mcp runs them for a key. Run it on
// any SDK transport (pds mcp uses stdio).
func NewLocalServer(svc *service.Service, c domain.Caller, log *slog.Logger) *sdk.Server {
	return newSDKServer(newTools(svc), log, func(ctx context.Context, t *tool, args json.RawMessage) (*sdk.CallToolResult, error) {
		res, _ := runTool(ctx, log, t, c, args, service.NewRequestID(), time.Now())
		return res.sdk(), nil
	})
}

// NewRemoteServer returns an MCP server that serves the tools by forwarding
// each call to the /v1/mcp endpoint of the pds at baseURL (such as
// https://pds.example.com), with key as its bearer key. It connects at once,
// so that a wrong URL or key is said before a host starts using the tools;
// stop ends the connection.
func NewRemoteServer(ctx context.Context, baseURL, key string, log *slog.Logger) (srv *sdk.Server, stop func() error, err error) {
	base := strings.TrimRight(baseURL, "/")
	endpoint := base + "/v1/mcp"
	httpClient := &http.Client{Transport: bearer{key: key, next: http.DefaultTransport}, Timeout: 2 * time.Minute}
	if err := checkKey(ctx, httpClient, base); err != nil {
		return nil, nil, err
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "pds-mcp", Version: buildinfo.Version()}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: httpClient}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to %s: %w", endpoint, err)
	}
	r := &remote{endpoint: endpoint, session: cs, log: log}
	// The tools are only described here, never run: their service is nil.
	srv = newSDKServer(newTools(nil), log, r.call)
	return srv, cs.Close, nil
}

// checkKey asks the remote's GET /v1/whoami about the key, so that a wrong
// URL, an unknown key or one without the mcp scope is said plainly (the
// Problem's detail) rather than as a failed MCP handshake.
func checkKey(ctx context.Context, client *http.Client, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/whoami", nil)
	if err != nil {
		return fmt.Errorf("--url %q: %w", base, err)
	}
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("the pds at %s did not answer: %w", base, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("reading %s/v1/whoami: %w", base, err)
	}
	if res.StatusCode != http.StatusOK {
		var p struct{ Code, Detail string }
		json.Unmarshal(body, &p)
		if (res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden) && p.Code != "" {
			return fmt.Errorf("the pds at %s refused the key: %s: %s", base, p.Code, p.Detail)
		}
		return fmt.Errorf("%s/v1/whoami answered %s %s: is %s the base URL of a pds?", base, res.Status, p.Code, base)
	}
	var w struct {
		Data struct{ Scopes []string }
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return fmt.Errorf("%s/v1/whoami answered what is not a pds envelope: is %s the base URL of a pds?", base, base)
	}
	if !slices.Contains(w.Data.Scopes, keys.ScopeMCP) {
		return fmt.Errorf("the key lacks the %s scope that pds mcp --url needs (it has %s)", keys.ScopeMCP, strings.Join(w.Data.Scopes, ","))
	}
	return nil
}

// remote forwards tool calls to one pds's /v1/mcp over one client session.
type remote struct {
	endpoint string
	session  *sdk.ClientSession // safe for concurrent calls
	log      *slog.Logger
}

func (r *remote) call(ctx context.Context, t *tool, args json.RawMessage) (*sdk.CallToolResult, error) {
	res, err := r.session.CallTool(ctx, &sdk.CallToolParams{Name: t.Name, Arguments: args})
	if err == nil {
		return res, nil
	}
	// The call never got an answer (the server is down, the network failed):
	// a tool failure like any other, so that the model is told what to do.
	r.log.Warn("remote call failed", "tool", t.Name, "endpoint", r.endpoint, "error", err.Error())
	fail := toolFailure(r.log, t, &domain.Error{Code: domain.CodeServiceUnavailable, RetryAfter: 5,
		Detail: fmt.Sprintf("the pds at %s did not answer: %v", r.endpoint, err)}, service.NewRequestID())
	return fail.sdk(), nil
}

// newSDKServer registers every tool of tools on a new SDK server, each
// answered by run.
func newSDKServer(tools []*tool, log *slog.Logger, run func(context.Context, *tool, json.RawMessage) (*sdk.CallToolResult, error)) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "pds", Title: "Product Data Service", Version: buildinfo.Version()}, &sdk.ServerOptions{
		Instructions: instructions,
		Logger:       log,
		// Tools only, and the list never changes while the process runs.
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
		// The same caching hint as /v1/mcp: the list changes only with the binary.
		SetCacheable: func(_ context.Context, _ sdk.Request, c *sdk.Cacheable) { c.TTLMs = int(listTTL.Milliseconds()) },
	})
	notOpenWorld := false
	for _, t := range tools {
		srv.AddTool(&sdk.Tool{
			Name:         t.Name,
			Title:        t.Title,
			Description:  t.Description,
			InputSchema:  t.InputSchema,
			OutputSchema: t.OutputSchema,
			Annotations:  &sdk.ToolAnnotations{ReadOnlyHint: t.Annotations.ReadOnlyHint, OpenWorldHint: &notOpenWorld},
		}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			args := req.Params.Arguments
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage("{}")
			}
			if !isObject(args) {
				return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: "params.arguments must be an object"}
			}
			return run(ctx, t, args)
		})
	}
	return srv
}

// sdk turns a call result into the SDK's form; the bytes of the text block
// and of structuredContent are those /v1/mcp sends.
func (r callResult) sdk() *sdk.CallToolResult {
	out := &sdk.CallToolResult{IsError: r.IsError}
	for _, c := range r.Content {
		out.Content = append(out.Content, &sdk.TextContent{Text: c.Text})
	}
	if r.StructuredContent != nil {
		out.StructuredContent = r.StructuredContent
	}
	return out
}

// bearer adds the API key to every request to the remote pds.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}
