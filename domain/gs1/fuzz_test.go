package gs1

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The seed corpus under testdata/fuzz/ is written from the table cases by
//
//	GS1_WRITE_SEEDS=1 go test -run TestWriteFuzzSeeds ./gs1/
//
// Run the fuzzers with, for example,
//
//	go test -run '^$' -fuzz '^FuzzParseDigitalLink$' -fuzztime 10m -parallel 1 ./gs1/

func FuzzParseDigitalLink(f *testing.F) {
	for _, tc := range dlCases {
		f.Add(tc.uri)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		l, err := ParseDigitalLink(uri)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			switch e.Code {
			case CodeMalformedURI, CodeUnsupportedURIForm, CodeNoPrimaryIdentifier, CodeInvalidIdentifier:
			default:
				t.Fatalf("code %s", e.Code)
			}
			if e.Detail == "" || len(e.Detail) > maxDetail || !utf8.ValidString(e.Detail) {
				t.Fatalf("detail %q", e.Detail)
			}
			if l != nil {
				t.Fatal("link with an error")
			}
			return
		}
		checkLinkShape(t, l)
		c, err := ParseDigitalLink(l.CanonicalURI)
		if err != nil {
			t.Fatalf("canonical %q does not parse: %v", l.CanonicalURI, err)
		}
		if c.Primary != l.Primary || elemText(c.Qualifiers) != elemText(l.Qualifiers) || elemText(c.Attributes) != elemText(l.Attributes) || c.CanonicalURI != l.CanonicalURI {
			t.Fatalf("round trip of %q: %+v then %+v", uri, l, c)
		}
	})
}

func FuzzValidate(f *testing.F) {
	for _, tc := range validateCases {
		f.Add(tc.ns, tc.value)
	}
	for _, tc := range identifyCases {
		f.Add("", tc.in)
	}
	f.Fuzz(func(t *testing.T, ns, value string) {
		r, err := Validate(ns, value)
		switch ns {
		case "", NSAuto, NSGTIN, NSGLN, NSSSCC, NSInternalSKU:
			if err != nil {
				t.Fatalf("Validate(%q, %q): %v", ns, value, err)
			}
		default:
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeUnsupportedNamespace || len(e.Detail) > maxDetail {
				t.Fatalf("Validate(%q, %q): %v", ns, value, err)
			}
			return
		}
		checkReportShape(t, r)
		if r.Data.Input != value {
			t.Fatal("input not echoed")
		}
		if !r.Data.Valid && len(r.Warnings) == 0 {
			t.Fatal("invalid without a reason")
		}
		if ns == NSGTIN {
			c, ok := ValidGTIN(value)
			if ok != r.Data.Valid || ok && string(c[:]) != r.Data.Normalized {
				t.Fatalf("ValidGTIN(%q) = %q, %v; Validate says %v %q", value, c[:], ok, r.Data.Valid, r.Data.Normalized)
			}
		}
		if ns == "" && (strings.IndexByte(value, ':') < 0 || LooksLikeElementString(value)) && (r.Ambiguous || *r.Data.Namespace != NSElementString) {
			// Interpret reads every value Validate finds valid. What Validate
			// refuses it reads only by stripping or assuming something (digits
			// written with spaces, white space around a value, raw scanner
			// data too long for a SKU), and then says so in a warning.
			rs, err := Interpret(value)
			if r.Data.Valid && err != nil || !r.Data.Valid && err == nil && len(rs[0].Warnings) == 0 {
				t.Fatalf("Interpret(%q) = %v, %v; Validate valid=%v", value, rs, err, r.Data.Valid)
			}
			for _, rd := range rs {
				back, err := ParseSubject(rd.Subject.String())
				if err != nil || back != rd.Subject {
					t.Fatalf("ParseSubject(%q) = %v, %v", rd.Subject.String(), back, err)
				}
			}
		}
	})
}

// TestWriteFuzzSeeds writes the table cases as seed corpus files. It runs
// only when GS1_WRITE_SEEDS=1.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("GS1_WRITE_SEEDS") != "1" {
		t.Skip("set GS1_WRITE_SEEDS=1 to rewrite testdata/fuzz seeds")
	}
	// Seeds are rewritten from scratch; entries the fuzzer found keep their
	// hash names and stay.
	for _, name := range []string{"FuzzParseDigitalLink", "FuzzValidate"} {
		old, _ := filepath.Glob(filepath.Join("testdata", "fuzz", name, "seed-*"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(fuzzName string, i int, rule string, args ...string) {
		dir := filepath.Join("testdata", "fuzz", fuzzName)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		b.WriteString("go test fuzz v1\n")
		for _, a := range args {
			fmt.Fprintf(&b, "string(%q)\n", a)
		}
		name := fmt.Sprintf("seed-%03d-%s", i, slug(rule))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, tc := range dlCases {
		write("FuzzParseDigitalLink", i, tc.rule, tc.uri)
	}
	for i, tc := range validateCases {
		write("FuzzValidate", i, tc.rule, tc.ns, tc.value)
	}
	for i, tc := range identifyCases {
		write("FuzzValidate", len(validateCases)+i, tc.rule, "", tc.in)
	}
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for i := 0; i < len(s) && b.Len() < 48; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteByte(c)
			dash = false
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
			dash = false
		default:
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	return strings.TrimRight(b.String(), "-")
}
