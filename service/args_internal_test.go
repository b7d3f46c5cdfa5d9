package service

import (
	"encoding/json"
	"slices"
	"testing"
)

// scanResolve either declines a body or reads exactly what encoding/json
// reads from it; a body it declines is decoded by encoding/json, so the
// answer (and every refusal's wording) cannot depend on which one read it.
func FuzzScanResolve(f *testing.F) {
	for _, body := range []string{
		`{"identifiers":["09520123456788","gtin:09520000000011"]}`,
		" {\n\t\"identifiers\" : [ \"a\" , \"b\" ] }\r\n",
		`{"identifiers":[]}`,
		`{"identifiers":["a",]}`,
		`{"identifiers":["a"]`,
		`{"identifiers":["a"]}x`,
		`{"identifiers":["a"],"identifiers":["b"]}`,
		`{"Identifiers":["a"]}`,
		`{"identifiers":["a\"b"]}`,
		`{"identifiers":["ä"]}`,
		`{"identifiers":["a` + "\x01" + `"]}`,
		`{"identifiers":["a` + "\x7f" + `"]}`,
		`{"identifiers":[1,2]}`,
		`{"identifiers":"a"}`,
		`{"identifiers":[""]}`,
		`{"identifiers":null}`,
		`{}`,
		`{"identifiers":["a"] "x":1}`,
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var fast ResolveArgs
		if !scanResolve(body, &fast) {
			return
		}
		var slow ResolveArgs
		if err := json.Unmarshal(body, &slow); err != nil {
			t.Fatalf("scanned %q, which encoding/json refuses: %v", body, err)
		}
		if fast.Identifiers == nil || slow.Identifiers == nil || !slices.Equal(*fast.Identifiers, *slow.Identifiers) {
			t.Fatalf("%q: scanned %v, encoding/json %v", body, fast.Identifiers, slow.Identifiers)
		}
		if len(*fast.Identifiers) == 0 {
			t.Fatalf("%q: an empty batch is left to the general decoder and its refusal", body)
		}
	})
}

// The scanner reads the usual body, and declines what it leaves to
// encoding/json.
func TestScanResolve(t *testing.T) {
	cases := []struct {
		body string
		want []string // nil: declined
	}{
		{`{"identifiers":["09520123456788","gtin:09520000000011"]}`, []string{"09520123456788", "gtin:09520000000011"}},
		{" {\n\t\"identifiers\" : [ \"a\" , \"\" ] }\r\n", []string{"a", ""}},
		{`{"identifiers":[]}`, nil},
		{`{"identifiers":["a"],"identifiers":["b"]}`, nil},
		{`{"identifiers":["a\u0041"]}`, nil},
		{`{"identifiers":["a"]}}`, nil},
		{`{"identifiers":["a",]}`, nil},
	}
	for _, c := range cases {
		var a ResolveArgs
		ok := scanResolve([]byte(c.body), &a)
		if ok != (c.want != nil) || (ok && !slices.Equal(*a.Identifiers, c.want)) {
			t.Errorf("%q: ok=%v %v, want %v", c.body, ok, a.Identifiers, c.want)
		}
	}
}
