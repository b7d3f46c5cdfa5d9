package jsonutf8_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/productdata/pds/ingest/jsonutf8"
	"github.com/productdata/pds/internal/fuzzseed"
)

// Check names the member of every problem, and Fix replaces each as
// encoding/json would when decoding the string.
func TestCheckAndFix(t *testing.T) {
	tests := []struct {
		name, line string
		want       []string // Problem.String of each problem
		fixed      string
	}{
		{"valid", `{"a":"é","b":[1,"\ud83d\ude00"]}`, nil, `{"a":"é","b":[1,"\ud83d\ude00"]}`},
		{"escaped backslash before u", `{"a":"\\ud800"}`, nil, `{"a":"\\ud800"}`},
		{"claim value", "{\"object\":{\"value\":\"ab\xc3(\"}}",
			[]string{"object.value: invalid UTF-8 at byte 3 of the string (byte 23 of the line)"},
			"{\"object\":{\"value\":\"ab\uFFFD(\"}}"},
		{"nested in arrays and objects", "{\"object\":{\"value\":{\"a\":[1,{\"b\":[\"x\",\"\xff\"]}]}}}",
			[]string{"object.value.a[1].b[1]: invalid UTF-8 at byte 1 of the string (byte 39 of the line)"},
			"{\"object\":{\"value\":{\"a\":[1,{\"b\":[\"x\",\"\uFFFD\"]}]}}}"},
		{"second member", "{\"id\":\"c1\",\"manufacturer\":\"M\xfc ller\"}",
			[]string{"manufacturer: invalid UTF-8 at byte 2 of the string (byte 29 of the line)"},
			"{\"id\":\"c1\",\"manufacturer\":\"M\uFFFD ller\"}"},
		{"member name", "{\"object\":{\"k\xe9y\":1}}",
			[]string{"object: member name: invalid UTF-8 at byte 2 of the string (byte 14 of the line)"},
			"{\"object\":{\"k\uFFFDy\":1}}"},
		{"odd member names quoted", "{\"a b\":{\"\xff\":\"\xff\"}}",
			[]string{`["a b"]: member name: invalid UTF-8 at byte 1 of the string (byte 10 of the line)`,
				`["a b"]["` + "\uFFFD" + `"]: invalid UTF-8 at byte 1 of the string (byte 14 of the line)`},
			"{\"a b\":{\"\uFFFD\":\"\uFFFD\"}}"},
		{"truncated sequence, each byte", "[\"\xe2\x82\"]",
			[]string{"[0]: invalid UTF-8 at byte 1 of the string (byte 3 of the line)",
				"[0]: invalid UTF-8 at byte 2 of the string (byte 4 of the line)"},
			"[\"\uFFFD\uFFFD\"]"},
		{"encoded surrogate", "\"\xed\xa0\x80\"",
			[]string{"invalid UTF-8 at byte 1 of the string (byte 2 of the line)",
				"invalid UTF-8 at byte 2 of the string (byte 3 of the line)",
				"invalid UTF-8 at byte 3 of the string (byte 4 of the line)"},
			"\"\uFFFD\uFFFD\uFFFD\""},
		{"lone high surrogate escape", `{"a":"x\ud800y"}`,
			[]string{`a: escape \ud800 is half of a UTF-16 surrogate pair without the other half at byte 2 of the string (byte 8 of the line)`},
			`{"a":"x\ufffdy"}`},
		{"high then not low", `{"a":"\uD800\u0041"}`,
			[]string{`a: escape \uD800 is half of a UTF-16 surrogate pair without the other half at byte 1 of the string (byte 7 of the line)`},
			`{"a":"\ufffd\u0041"}`},
		{"lone low surrogate escape", `["\udc00"]`,
			[]string{`[0]: escape \udc00 is half of a UTF-16 surrogate pair without the other half at byte 1 of the string (byte 3 of the line)`},
			`["\ufffd"]`},
		{"outside a string", "{\"a\":1\xff}",
			[]string{"a: invalid UTF-8 outside a string at byte 7 of the line"},
			"{\"a\":1\uFFFD}"},
		{"unterminated string", "{\"a\":\"\xff", []string{"a: invalid UTF-8 at byte 1 of the string (byte 7 of the line)"}, "{\"a\":\"\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := []byte(tt.line)
			if got := jsonutf8.Valid(line); got != (len(tt.want) == 0) {
				t.Errorf("Valid = %v", got)
			}
			probs, total := jsonutf8.Check(line, 0)
			var got []string
			for _, p := range probs {
				got = append(got, p.String())
			}
			if !reflect.DeepEqual(got, tt.want) || total != len(tt.want) {
				t.Errorf("Check = %d %q\nwant %q", total, got, tt.want)
			}
			if fixed := string(jsonutf8.Fix(line)); fixed != tt.fixed {
				t.Errorf("Fix = %q, want %q", fixed, tt.fixed)
			}
			if first, total := jsonutf8.Check(line, 1); len(tt.want) > 1 && (len(first) != 1 || total != len(tt.want)) {
				t.Errorf("Check(1) = %d problems of %d", len(first), total)
			}
		})
	}
}

// A line nested deeper than encoding/json reads is still walked, its bad
// bytes found and replaced.
func TestDeepNesting(t *testing.T) {
	line := []byte(strings.Repeat("[", 20000) + "\"\xff\"" + strings.Repeat("]", 20000))
	probs, total := jsonutf8.Check(line, 0)
	if total != 1 || !strings.HasSuffix(probs[0].Path, "…") {
		t.Fatalf("Check = %d %+v", total, probs)
	}
	if !jsonutf8.Valid(jsonutf8.Fix(line)) {
		t.Error("Fix left a problem")
	}
}

// FuzzFix holds Fix and Check to what they promise for any line: Fix's
// result is Valid, has as many replacements as Check counts, keeps valid
// JSON valid and decodes (with encoding/json) to the very values the line
// decodes to, since encoding/json replaces the same bytes and escapes when it
// decodes a string; and a line Valid accepts is left as it is.
//
//	go test -run '^$' -fuzz '^FuzzFix$' -fuzztime 60s ./jsonutf8/
func FuzzFix(f *testing.F) {
	fuzzseed.Seed(f,
		[]any{[]byte(`{"a":"é","b":[1,"\ud83d\ude00"]}`)},
		[]any{[]byte("{\"object\":{\"value\":\"ab\xc3(\"}}")},
		[]any{[]byte("{\"k\xe9y\":[\"\xe2\x82\",\"\xed\xa0\x80\"]}")},
		[]any{[]byte(`{"a":"\uD800\u0041","b":"\udc00","c":"\\ud800"}`)},
		[]any{[]byte("{\"a\":1\xff}")},
		[]any{[]byte("[[[\"\xff")},
	)
	f.Fuzz(func(t *testing.T, line []byte) {
		fixed := jsonutf8.Fix(line)
		if !jsonutf8.Valid(fixed) || !utf8.Valid(fixed) {
			t.Fatalf("Fix(%q) = %q is not valid", line, fixed)
		}
		probs, total := jsonutf8.Check(line, 3)
		if jsonutf8.Valid(line) != (total == 0) || (total == 0) != (string(fixed) == string(line)) {
			t.Fatalf("%q: Valid %v, %d problems, fixed %q", line, jsonutf8.Valid(line), total, fixed)
		}
		if len(probs) != min(total, 3) {
			t.Fatalf("%d problems listed of %d", len(probs), total)
		}
		for _, p := range probs {
			if !utf8.ValidString(p.String()) {
				t.Fatalf("message %q is not UTF-8", p.String())
			}
		}
		if again, n := jsonutf8.Check(fixed, 0); n != 0 {
			t.Fatalf("Fix left %v", again)
		}
		if !json.Valid(line) {
			return
		}
		if !json.Valid(fixed) {
			t.Fatalf("Fix made valid JSON %q invalid: %q", line, fixed)
		}
		var a, b any
		if err := json.Unmarshal(line, &a); err != nil {
			return // deeper than encoding/json reads
		}
		if err := json.Unmarshal(fixed, &b); err != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("%q decodes to %#v, its fix %q to %#v (%v)", line, a, fixed, b, err)
		}
	})
}
