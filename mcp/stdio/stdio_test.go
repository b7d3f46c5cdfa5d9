package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// parseLine answers what is not a JSON-RPC 2.0 message with the error
// JSON-RPC gives it, and the id only when it was read and is valid.
func TestParseLine(t *testing.T) {
	tests := []struct {
		line string
		code int64  // 0: a valid message
		id   string // the error's id as written, "" for null; or the message's id
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 0, `1`},
		{`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, 0, `1.5`},
		{`{"jsonrpc":"2.0","id":1e999,"method":"tools/list"}`, 0, `1e999`},
		{`{"jsonrpc":"2.0","id":"a\u00e9","method":"tools/list"}`, 0, `"a\u00e9"`},
		{`{"jsonrpc":"2\u002e0","method":"notifications/initialized","params":{}}`, 0, ``},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, 0, `7`},
		{`{"jsonrpc":"2.0","id":7,"method":"x","ID":{}}`, 0, `7`},
		{`{`, codeParseError, ``},
		{`hello`, codeParseError, ``},
		{"\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, codeParseError, ``},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"} x`, codeParseError, ``},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, codeParseError, ``},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"t\xff\"}", codeParseError, ``},
		{strings.Repeat("[", 20000) + strings.Repeat("]", 20000), codeParseError, ``},
		{`null`, codeInvalidRequest, ``},
		{`[]`, codeInvalidRequest, ``},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, codeInvalidRequest, ``},
		{`"x"`, codeInvalidRequest, ``},
		{`42`, codeInvalidRequest, ``},
		{`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, codeInvalidRequest, `1`},
		{`{"id":"a","method":"tools/list"}`, codeInvalidRequest, `"a"`},
		{`{"jsonrpc":2.0,"id":1,"method":"tools/list"}`, codeInvalidRequest, `1`},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, codeInvalidRequest, ``},
		{`{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, codeInvalidRequest, ``},
		{`{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`, codeInvalidRequest, ``},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, codeInvalidRequest, ``},
		{`{"jsonrpc":"1.0","id":null,"method":"tools/list"}`, codeInvalidRequest, ``},
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}`, codeInvalidRequest, ``},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, codeInvalidRequest, `1`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}`, codeInvalidRequest, `1`},
		{`{"jsonrpc":"2.0","id":1}`, codeInvalidRequest, `1`},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, codeInvalidRequest, `1`},
		{`{"jsonrpc":"2.0","result":{}}`, codeInvalidRequest, ``},
		{`{"jsonrpc":"1.0","method":"notifications/initialized"}`, codeInvalidRequest, ``},
	}
	for _, tt := range tests {
		m, err := parseLine([]byte(tt.line))
		name := tt.line
		if len(name) > 60 {
			name = name[:60] + "…"
		}
		switch {
		case tt.code == 0 && err != nil:
			t.Errorf("%s: %d %s", name, err.code, err.message)
		case tt.code == 0 && string(m.id) != tt.id:
			t.Errorf("%s: id %s, want %s", name, m.id, tt.id)
		case tt.code != 0 && (err == nil || err.code != tt.code || string(err.id) != tt.id):
			t.Errorf("%s: %+v, want code %d id %q", name, err, tt.code, tt.id)
		}
	}
}

// testServer is an SDK server with two tools: echo answers at once, wait
// answers when release is closed (or at once when it is nil).
func testServer(release chan struct{}) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "echo"}, func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Text}}}, nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "wait"}, func(ctx context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
		if release != nil {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Text}}}, nil, nil
	})
	return srv
}

const initialize = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

func call(id, tool, text string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"text":"` + text + `"}}}` + "\n"
}

// runSession runs srv on the transport over input until the end of input
// and returns every line written, each checked to be one JSON-RPC response.
func runSession(t *testing.T, srv *sdk.Server, tr *Transport) []response {
	t.Helper()
	var out syncBuffer
	tr.Out = &out
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := srv.Run(ctx, tr); err != nil && err != io.EOF {
		t.Fatalf("run: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the session did not end at the end of input")
	}
	return responses(t, out.String())
}

// response is one line a session wrote.
type response struct {
	line string
	id   string // as written
	code int64  // of an error, else 0
	text string // of a tool result's first content block
}

func responses(t *testing.T, out string) []response {
	t.Helper()
	var all []response
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  *struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
			Error *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.JSONRPC != "2.0" || m.ID == nil || (m.Result == nil) == (m.Error == nil) {
			t.Fatalf("not a JSON-RPC response: %q (%v)", line, err)
		}
		r := response{line: line, id: string(m.ID)}
		if m.Error != nil {
			r.code = m.Error.Code
		} else if len(m.Result.Content) > 0 {
			r.text = m.Result.Content[0].Text
		}
		all = append(all, r)
	}
	return all
}

func byID(rs []response) map[string]response {
	m := map[string]response{}
	for _, r := range rs {
		m[r.id] = r
	}
	return m
}

// The end of input ends the session only once every request read has been
// answered, each under its id as written; a second request with the id of
// one still pending is refused and the first is answered all the same; bad
// lines in between are answered and change nothing.
func TestSessionAnswersEveryRequestRead(t *testing.T) {
	release := make(chan struct{})
	in := initialize + call("1", "wait", "one") + call("1.5", "echo", "one and a half") + call("1", "echo", "again") +
		"{\n" + call("1e2", "echo", "hundred") + call(`"s\u00e9"`, "echo", "string") + "null\n" + call("-0", "wait", "minus zero")
	// The waiting calls are answered only once the session has read the
	// end of its input.
	rs := runSession(t, testServer(release), New(&atEOF{r: strings.NewReader(in), do: func() { close(release) }}, nil, nil))
	got := byID(rs)
	for id, text := range map[string]string{"1": "one", "1.5": "one and a half", "1e2": "hundred", `"s\u00e9"`: "string", "-0": "minus zero"} {
		if r, ok := got[id]; !ok || r.text != text {
			t.Errorf("id %s: %+v, want the text %q", id, r, text)
		}
	}
	var nulls []int64
	for _, r := range rs {
		if r.id == "null" {
			nulls = append(nulls, r.code)
		}
	}
	// the second id 1 (refused while the first was pending), {, null
	if len(nulls) != 3 || nulls[0] != codeInvalidRequest || nulls[1] != codeParseError || nulls[2] != codeInvalidRequest {
		t.Errorf("errors with id null: %v\n%v", nulls, rs)
	}
	if len(rs) != 9 {
		t.Errorf("%d responses, want 9: %v", len(rs), rs)
	}
}

// A notifications/cancelled names the request by the client's id; the
// request is cancelled, and the end of input does not wait for it.
func TestCancellationByTheClientsID(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	in := initialize + call("1.5", "wait", "never") +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5,"reason":"no longer needed"}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}` + "\n" + call("2", "echo", "two")
	tr := New(strings.NewReader(in), nil, nil)
	tr.DrainTimeout = time.Hour // the test fails by its own timeout if the drain waits
	got := byID(runSession(t, testServer(release), tr))
	if got["2"].text != "two" || got[`"init"`].id == "" {
		t.Errorf("responses %v", got)
	}
}

// A line longer than MaxLine is refused, and the next is read.
func TestLongLine(t *testing.T) {
	in := initialize + call("1", "echo", strings.Repeat("x", 5000)) + call("2", "echo", "short")
	tr := New(strings.NewReader(in), nil, nil)
	tr.MaxLine = 4096
	rs := runSession(t, testServer(nil), tr)
	got := byID(rs)
	if got["2"].text != "short" || got["null"].code != codeInvalidRequest || len(rs) != 3 {
		t.Errorf("responses %v", rs)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// atEOF calls do once, when r first reports the end of input.
type atEOF struct {
	r    io.Reader
	once sync.Once
	do   func()
}

func (a *atEOF) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if err == io.EOF {
		a.once.Do(a.do)
	}
	return n, err
}
