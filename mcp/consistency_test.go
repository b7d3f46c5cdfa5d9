package mcp_test

import (
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
)

// A failed tool call speaks pds's words, never the Go decoder's: an unknown
// argument is named with the members the tool takes, as REST names an
// unknown body member.
func TestToolErrorsWithoutDecoderText(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_product", map[string]any{"identifier": demo, "id": "x"}, "unknown member 'id': this operation takes only 'identifier'"},
		{"validate_identifier", map[string]any{"value": "1", "Namespace": "gtin"}, "unknown member 'Namespace'"},
		{"resolve_identifiers", map[string]any{"identifiers": []any{demo}, "a": 1, "b": 2}, "unknown members 'a', 'b'"},
		{"whoami", map[string]any{"x": true}, "this operation takes no members"},
		{"get_source", map[string]any{"source_id": 5}, "member 'source_id' has the wrong type"},
	}
	for _, c := range cases {
		r := e.post(t, "1", "tools/call", callParams(c.tool, c.args))
		if r.status != 200 || ingesttest.Get(r.json, "result.isError") != true {
			t.Fatalf("%s %v: %d %s", c.tool, c.args, r.status, r.body)
		}
		text, _ := ingesttest.Get(r.json, "result.content.0.text").(string)
		if !strings.Contains(text, c.want) || strings.Contains(text, "json:") || strings.Contains(text, "unknown field") {
			t.Errorf("%s %v: text %q, want %q and no decoder text", c.tool, c.args, text, c.want)
		}
	}
}
