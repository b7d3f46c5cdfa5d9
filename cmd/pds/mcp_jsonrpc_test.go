package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/productdata/pds/ingest/ingesttest"
)

// rpcAnswer is what a case expects for its line: an answer under id (as
// written; "null" for none) with an error code, or a result when code is 0.
type rpcAnswer struct {
	id   string
	code int64
}

const (
	stdioInit = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`
	stdioAfter = `{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	list       = `,"method":"tools/list"}`
)

// stdioCases are lines that are not valid JSON-RPC 2.0 requests, and
// requests with ids of every shape, with the answer each must get.
var stdioCases = []struct {
	name string
	line string
	want []rpcAnswer // nil: no answer
}{
	{"not JSON: an object cut short", `{`, []rpcAnswer{{"null", -32700}}},
	{"not JSON: plain text", `hello, server`, []rpcAnswer{{"null", -32700}}},
	{"a byte order mark before a request", "\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":5` + list, []rpcAnswer{{"null", -32700}}},
	{"trailing data after the object", `{"jsonrpc":"2.0","id":5` + list + ` x`, []rpcAnswer{{"null", -32700}}},
	{"two objects on one line", `{"jsonrpc":"2.0","id":5` + list + `{"jsonrpc":"2.0","id":6` + list, []rpcAnswer{{"null", -32700}}},
	{"not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\x28\"" + list, []rpcAnswer{{"null", -32700}}},
	{"nested deeper than JSON readers go", `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"a":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}`, []rpcAnswer{{"null", -32700}}},
	{"nested deep, at the top", strings.Repeat("[", 100000), []rpcAnswer{{"null", -32700}}},
	{"null", `null`, []rpcAnswer{{"null", -32600}}},
	{"an empty array", `[]`, []rpcAnswer{{"null", -32600}}},
	{"a batch", `[{"jsonrpc":"2.0","id":5` + list + `,{"jsonrpc":"2.0","id":6` + list + `]`, []rpcAnswer{{"null", -32600}}},
	{"a string", `"tools/list"`, []rpcAnswer{{"null", -32600}}},
	{"a number", `42`, []rpcAnswer{{"null", -32600}}},
	{"a boolean", `true`, []rpcAnswer{{"null", -32600}}},
	{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":5` + list, []rpcAnswer{{"5", -32600}}},
	{"jsonrpc missing", `{"id":5` + list, []rpcAnswer{{"5", -32600}}},
	{"jsonrpc a number", `{"jsonrpc":2.0,"id":"five"` + list, []rpcAnswer{{`"five"`, -32600}}},
	{"id an object", `{"jsonrpc":"2.0","id":{"n":5}` + list, []rpcAnswer{{"null", -32600}}},
	{"id a boolean", `{"jsonrpc":"2.0","id":true` + list, []rpcAnswer{{"null", -32600}}},
	{"id an array", `{"jsonrpc":"2.0","id":[5]` + list, []rpcAnswer{{"null", -32600}}},
	{"id null", `{"jsonrpc":"2.0","id":null` + list, []rpcAnswer{{"null", -32600}}},
	{"id twice", `{"jsonrpc":"2.0","id":5,"id":6` + list, []rpcAnswer{{"null", -32600}}},
	{"method not a string", `{"jsonrpc":"2.0","id":5,"method":["tools/list"]}`, []rpcAnswer{{"5", -32600}}},
	{"params neither object nor array", `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":"all"}`, []rpcAnswer{{"5", -32600}}},
	{"no method", `{"jsonrpc":"2.0","id":5}`, []rpcAnswer{{"5", -32600}}},
	{"a notification with jsonrpc 1.0", `{"jsonrpc":"1.0","method":"notifications/initialized"}`, []rpcAnswer{{"null", -32600}}},
	{"an unknown method", `{"jsonrpc":"2.0","id":5,"method":"no/such"}`, []rpcAnswer{{"5", -32601}}},
	{"id 1.5", `{"jsonrpc":"2.0","id":1.5` + list, []rpcAnswer{{"1.5", 0}}},
	{"id 1e2", `{"jsonrpc":"2.0","id":1e2` + list, []rpcAnswer{{"1e2", 0}}},
	{"id 1e999", `{"jsonrpc":"2.0","id":1e999` + list, []rpcAnswer{{"1e999", 0}}},
	{"id of 400 digits", `{"jsonrpc":"2.0","id":` + strings.Repeat("9", 400) + list, []rpcAnswer{{strings.Repeat("9", 400), 0}}},
	{"id -0", `{"jsonrpc":"2.0","id":-0` + list, []rpcAnswer{{"-0", 0}}},
	{"id a string with escapes", `{"jsonrpc":"2.0","id":"a\u00e9\"b"` + list, []rpcAnswer{{`"a\u00e9\"b"`, 0}}},
	{"id a string of digits", `{"jsonrpc":"2.0","id":"5"` + list, []rpcAnswer{{`"5"`, 0}}},
	{"a response from the client", `{"jsonrpc":"2.0","id":99,"result":{}}`, nil},
	{"a blank line", `   `, nil},
}

// TestStdioMCPFollowsJSONRPC2 runs the real pds mcp loop (its flags, the
// snapshot, the SDK's server, its stdio transport) on each case line,
// between an initialize and a later tool call: the line gets its answer (a
// -32700 or -32600 error with the id as JSON-RPC 2.0 says, or a result under
// its id exactly as written), the initialize read before it and the call
// read after it are answered too, nothing else is written, and the session
// ends without error at the end of input.
func TestStdioMCPFollowsJSONRPC2(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	for _, c := range stdioCases {
		t.Run(c.name, func(t *testing.T) {
			in := stdioInit + "\n" + c.line + "\n" + stdioAfter + "\n"
			var out, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := serveMCP(ctx, []string{"--snapshot", snap}, strings.NewReader(in), &out, &stderr); err != nil || ctx.Err() != nil {
				t.Fatalf("pds mcp: %v (%v)\n%s", err, ctx.Err(), stderr.String())
			}
			got := rpcAnswers(t, out.String())
			want := append([]rpcAnswer{{`"init"`, 0}, {`"after"`, 0}}, c.want...)
			if fmt.Sprint(sortAnswers(got)) != fmt.Sprint(sortAnswers(want)) {
				t.Errorf("answers %v, want %v:\n%s", got, want, out.String())
			}
		})
	}
}

// The same lines through one pds mcp process, the test binary run as pds:
// every line is answered as above, in one session, and the process exits 0
// at the end of input.
func TestStdioMCPSurvivesEveryBadLine(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	var in strings.Builder
	in.WriteString(stdioInit + "\n")
	want := []rpcAnswer{{`"init"`, 0}}
	for i, c := range stdioCases {
		in.WriteString(c.line + "\n")
		want = append(want, c.want...)
		// a valid request after each line, with an id of its own
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"after %d","method":"tools/call","params":{"name":"validate_identifier","arguments":{"value":"09520123456788"}}}`+"\n", i)
		want = append(want, rpcAnswer{fmt.Sprintf(`"after %d"`, i), 0})
	}
	cmd := pdsCommand("mcp", "--snapshot", snap)
	cmd.Stdin = strings.NewReader(in.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pds mcp: %v\n%s", err, stderr.String())
	}
	got := rpcAnswers(t, string(out))
	if fmt.Sprint(sortAnswers(got)) != fmt.Sprint(sortAnswers(want)) {
		t.Errorf("answers %v\nwant %v", sortAnswers(got), sortAnswers(want))
	}
}

// rpcAnswers reads what a session wrote: every line must be one JSON-RPC
// 2.0 response (result or error, never both) with an id member.
func rpcAnswers(t *testing.T, out string) []rpcAnswer {
	t.Helper()
	var got []rpcAnswer
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.JSONRPC != "2.0" || m.ID == nil || (m.Result == nil) == (m.Error == nil) {
			t.Fatalf("not one JSON-RPC 2.0 response: %q (%v)", line, err)
		}
		a := rpcAnswer{id: string(m.ID)}
		if m.Error != nil {
			a.code = m.Error.Code
			if m.Error.Message == "" {
				t.Errorf("an error without a message: %s", line)
			}
		}
		got = append(got, a)
	}
	return got
}

func sortAnswers(as []rpcAnswer) []string {
	var s []string
	for _, a := range as {
		s = append(s, fmt.Sprintf("%s:%d", a.id, a.code))
	}
	slices.Sort(s)
	return s
}
