package gs1

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/productdata/pds/internal/fuzzseed"
)

// FuzzParseElementString checks that any input gives a parsed element
// string or an *Error with INVALID_IDENTIFIER and a short detail, never a
// panic, and that a parse round-trips through its bracketed form and its
// Digital Link. The seed corpus (testdata/fuzz/FuzzParseElementString) is
// the table cases, written by PDS_WRITE_SEEDS=1 go test -run '^$' -fuzz
// '^FuzzParseElementString$' -fuzztime 1x ./gs1/.
func FuzzParseElementString(f *testing.F) {
	var seeds [][]any
	for _, tc := range esCases {
		seeds = append(seeds, []any{tc.in})
	}
	fuzzseed.Seed(f, seeds...)
	f.Fuzz(func(t *testing.T, in string) {
		es, err := ParseElementString(in)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeInvalidIdentifier {
				t.Fatalf("error %T %v", err, err)
			}
			if e.Detail == "" || len(e.Detail) > maxDetail || !utf8.ValidString(e.Detail) {
				t.Fatalf("detail %q", e.Detail)
			}
			if es != nil {
				t.Fatal("a result with an error")
			}
			return
		}
		if es.Input != in {
			t.Fatal("input not echoed")
		}
		checkElementStringShape(t, es)
	})
}
