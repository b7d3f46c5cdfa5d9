package domain_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
)

// Marshal writes <, > and & as themselves and is otherwise json.Marshal,
// raw values included (a json.RawMessage is compacted without escaping).
func TestFinding12_7g_MarshalNoHTMLEscape(t *testing.T) {
	v := map[string]any{
		"name": "Scott & Kowalski <Foods>",
		"raw":  json.RawMessage(`{"a": "x & y",  "b": [1, 2]}`),
		"n":    1.5,
		"u":    "\u2028 é \"q\"",
	}
	got, err := domain.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	std, _ := json.Marshal(v)
	want := strings.NewReplacer(`\u0026`, "&", `\u003c`, "<", `\u003e`, ">").Replace(string(std))
	if string(got) != want {
		t.Errorf("Marshal = %s\nwant        %s", got, want)
	}
	if strings.Contains(string(got), `\u0026`) || !strings.Contains(string(got), `"x & y"`) {
		t.Errorf("escaped: %s", got)
	}
}
