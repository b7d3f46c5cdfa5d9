package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/productdata/pds/internal/fuzzseed"
)

var fuzzLines = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":"a\u00e9\"","method":"m"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	`{"jsonrpc":"2.0","id":7,"result":{}}`,
	`{"jsonrpc":"1.0","id":{"a":1},"method":"m"}`,
	"\xef\xbb\xbf{}", `[]`, `null`, `{`, "{\"id\":\"\xff\"}", `{"jsonrpc":"2.0","id":1e999,"method":"m"} x`,
}

// FuzzParseLine: whatever the line, parseLine returns a message or one of
// JSON-RPC's two errors for a message that cannot be read, never panics;
// -32700 exactly when the line is no JSON text (or not UTF-8, or begins with
// a byte order mark); an error's id is null or the id as the line wrote it;
// and the answer it makes is valid UTF-8 JSON.
//
//	go test -run '^$' -fuzz '^FuzzParseLine$' -fuzztime 60s ./mcp/stdio/
func FuzzParseLine(f *testing.F) {
	var seeds [][]any
	for _, l := range fuzzLines {
		seeds = append(seeds, []any{[]byte(l)})
	}
	fuzzseed.Seed(f, seeds...)
	f.Fuzz(func(t *testing.T, line []byte) {
		m, lerr := parseLine(line)
		notJSON := bytes.HasPrefix(line, []byte(byteOrderMark)) || !utf8.Valid(line) || !json.Valid(line)
		if lerr == nil {
			if notJSON {
				t.Fatalf("%q read as a message", line)
			}
			if m.id != nil && (checkID(m.id) != nil || !bytes.Contains(line, m.id)) {
				t.Fatalf("%q: id %q", line, m.id)
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal(line, &obj) != nil || stringValue(obj["jsonrpc"]) != "2.0" {
				t.Fatalf("%q read as a message", line)
			}
			return
		}
		if (lerr.code == codeParseError) != notJSON || lerr.code != codeParseError && lerr.code != codeInvalidRequest {
			t.Fatalf("%q: code %d", line, lerr.code)
		}
		if lerr.id != nil && (checkID(lerr.id) != nil || !bytes.Contains(line, lerr.id)) {
			t.Fatalf("%q: error id %q", line, lerr.id)
		}
		var out bytes.Buffer
		(&conn{out: &out}).writeError(lerr)
		if b := out.Bytes(); !utf8.Valid(b) || !json.Valid(b) || b[len(b)-1] != '\n' {
			t.Fatalf("%q: answer %q", line, b)
		}
	})
}

// FuzzSession runs a connection over arbitrary input with a stand-in for
// the SDK that answers every request at once: the session ends at the end
// of input, every line it writes is one valid JSON-RPC response, each line
// that is no message gets exactly one error, each request exactly one
// answer (its result under its id as written, or an error when its id was
// still pending), and nothing else is written.
//
//	go test -run '^$' -fuzz '^FuzzSession$' -fuzztime 60s ./mcp/stdio/
func FuzzSession(f *testing.F) {
	fuzzseed.Seed(f,
		[]any{[]byte(strings.Join(fuzzLines, "\n"))},
		[]any{[]byte(strings.Join(fuzzLines, "\r\n") + "\n\n  \n")},
		[]any{[]byte(fuzzLines[0] + "\n" + fuzzLines[0] + "\n" + fuzzLines[1])},
	)
	f.Fuzz(func(t *testing.T, input []byte) {
		var out syncBuffer
		tr := &Transport{In: bytes.NewReader(input), Out: &out, DrainTimeout: time.Minute}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, _ := tr.Connect(ctx)
		for {
			msg, err := c.Read(ctx)
			if err != nil {
				break
			}
			if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
				if err := c.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{"method":` + string(mustJSON(req.Method)) + `}`)}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if ctx.Err() != nil {
			t.Fatal("the session did not end")
		}
		c.Close()
		var errs, requests int
		var requestIDs []string
		for _, line := range strings.Split(string(input), "\n") {
			l := trimJSONSpace([]byte(line))
			if len(l) == 0 {
				continue
			}
			m, lerr := parseLine(l)
			switch {
			case lerr != nil:
				errs++
			case !m.response && m.id != nil:
				requests++
				requestIDs = append(requestIDs, string(m.id))
			}
		}
		rs := responses(t, out.String())
		if len(rs) != errs+requests {
			t.Fatalf("%d answers to %d bad lines and %d requests:\n%s", len(rs), errs, requests, out.String())
		}
		for _, r := range rs {
			if r.code == 0 && !slices.Contains(requestIDs, r.id) || r.code != 0 && r.code != codeParseError && r.code != codeInvalidRequest {
				t.Fatalf("answer %q to no request of %q", r.line, input)
			}
			if !utf8.ValidString(r.line) {
				t.Fatalf("answer %q is not UTF-8", r.line)
			}
		}
	})
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
