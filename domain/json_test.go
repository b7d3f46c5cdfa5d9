package domain_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
)

// Marshal writes <, > and & as themselves and is otherwise json.Marshal,
// raw values included (a json.RawMessage is compacted without escaping).
func TestMarshalNoHTMLEscape(t *testing.T) {
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

// AppendMarshal appends what Marshal returns, leaves dst alone on error, and
// a pooled encoder carries nothing from one value to the next (an error half
// way through a value included).
func TestAppendMarshal(t *testing.T) {
	tests := []struct {
		name string
		dst  string
		v    any
		want string
		err  bool
	}{
		{"string onto a prefix", `{"id":`, "a<b>&\"c\"", `{"id":"a<b>&\"c\""`, false},
		{"struct", "", struct {
			A string `json:"a"`
			B *int   `json:"b"`
		}{A: "x"}, `{"a":"x","b":null}`, false},
		{"unsupported value", "keep", map[string]any{"a": 1, "f": func() {}}, "keep", true},
		{"after an error", "", []int{1, 2}, `[1,2]`, false},
		{"raw message compacted", "[", json.RawMessage(`{ "a" : [1, 2] }`), `[{"a":[1,2]}`, false},
		{"raw message not utf-8", "", map[string]any{"s": "a\xffb", "r": json.RawMessage("[\"ab\xc3(\",\"\xe2\x82\"]")},
			`{"r":["ab\ufffd(","\ufffd\ufffd"],"s":"a\ufffdb"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := domain.AppendMarshal([]byte(tt.dst), tt.v)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if string(got) != tt.want {
				t.Errorf("AppendMarshal = %s, want %s", got, tt.want)
			}
			if !tt.err {
				m, _ := domain.Marshal(tt.v)
				if string(got) != tt.dst+string(m) {
					t.Errorf("AppendMarshal = %s, Marshal = %s", got, m)
				}
			}
		})
	}
}
