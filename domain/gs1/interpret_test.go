package gs1

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestInterpret(t *testing.T) {
	type reading struct{ subject, warning string }
	cases := []struct {
		rule string
		in   string
		want []reading
		err  string // a part of the INVALID_IDENTIFIER detail
	}{
		{rule: "a subject string is read as written", in: "gtin:9520123456788", want: []reading{{"gtin:09520123456788", ""}}},
		{rule: "a bare GTIN-14 is read as written", in: "09520123456788", want: []reading{{"gtin:09520123456788", ""}}},
		{rule: "13 digits stay a GTIN and a GLN", in: "9520123456788", want: []reading{{"gtin:09520123456788", ""}, {"gln:9520123456788", ""}}},
		{rule: "a SKU is read as written", in: "SKU-1", want: []reading{{"internal_sku:SKU-1", ""}}},
		{rule: "hyphens between digits: the digits, then the SKU", in: "952-0123-456788",
			want: []reading{{"gtin:09520123456788", WarnSeparatorsRemoved}, {"gln:9520123456788", WarnSeparatorsRemoved}, {"internal_sku:952-0123-456788", ""}}},
		{rule: "spaces between digits: no SKU reading", in: "9520 1234 5678 8",
			want: []reading{{"gtin:09520123456788", WarnSeparatorsRemoved}, {"gln:9520123456788", WarnSeparatorsRemoved}}},
		{rule: "a GTIN-14 with spaces", in: "0 9520 1234 5678 8", want: []reading{{"gtin:09520123456788", WarnSeparatorsRemoved}}},
		{rule: "hyphenated digits with a wrong check digit stay a SKU", in: "952-0123-456789", want: []reading{{"internal_sku:952-0123-456789", ""}}},
		{rule: "spaced digits with a wrong check digit are invalid", in: "9520 1234 5678 9", err: "check digit is 8"},
		{rule: "a UPC-A that lost its leading zero", in: "12345678905",
			want: []reading{{"gtin:00012345678905", WarnLeadingZerosAssumed}, {"internal_sku:12345678905", ""}}},
		{rule: "11 digits with a wrong check digit are a SKU", in: "12345678901", want: []reading{{"internal_sku:12345678901", ""}}},
		{rule: "raw scanner data, GTIN only", in: "0109520123456788",
			want: []reading{{"gtin:09520123456788", WarnReadAsElementString}, {"internal_sku:0109520123456788", ""}}},
		{rule: "raw scanner data with a batch", in: "010952012345678810ABC",
			want: []reading{{"gtin:09520123456788", WarnReadAsElementString}, {"internal_sku:010952012345678810ABC", ""}}},
		{rule: "raw scanner data with a bad check digit is a SKU", in: "0109520123456789", want: []reading{{"internal_sku:0109520123456789", ""}}},
		{rule: "18 digits stay an SSCC", in: "009520123456789018", err: "check digit"},
		{rule: "scanner data with a symbology identifier", in: "]C1010952012345678810ABC", want: []reading{{"gtin:09520123456788", WarnReadAsElementString}}},
		{rule: "a bracketed element string", in: "(01)09520123456788(10)ABC", want: []reading{{"gtin:09520123456788", WarnReadAsElementString}}},
		{rule: "a Digital Link URI", in: "https://id.gs1.org/01/09520123456788/10/ABC?17=261231", want: []reading{{"gtin:09520123456788", WarnReadAsDigitalLink}}},
		{rule: "a Digital Link URI with a GLN", in: "HTTP://example.com/414/9520123456788", want: []reading{{"gln:9520123456788", WarnReadAsDigitalLink}}},
		{rule: "a Digital Link URI with a key pds has no namespace for", in: "https://example.com/8004/9520ABC", err: "GIAI"},
		{rule: "a URI that is no Digital Link", in: "https://example.com/products/1", err: "Digital Link"},
		{rule: "white space around a value", in: " 09520123456788\r\n", want: []reading{{"gtin:09520123456788", WarnWhitespaceRemoved}}},
		{rule: "only white space", in: "  ", err: "internal SKU"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			rs, err := Interpret(c.in)
			if c.err != "" {
				var e *Error
				if !errors.As(err, &e) || e.Code != CodeInvalidIdentifier || !strings.Contains(e.Detail, c.err) {
					t.Fatalf("Interpret(%q) = %v, %v; want INVALID_IDENTIFIER with %q", c.in, rs, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Interpret(%q): %v", c.in, err)
			}
			if len(rs) != len(c.want) {
				t.Fatalf("Interpret(%q) = %v, want %v", c.in, rs, c.want)
			}
			for i, w := range c.want {
				r := rs[i]
				if r.Subject.String() != w.subject {
					t.Errorf("reading %d: %s, want %s", i, r.Subject, w.subject)
				}
				switch {
				case w.warning == "" && len(r.Warnings) > 0:
					t.Errorf("reading %d: warnings %v, want none", i, r.Warnings)
				case w.warning != "" && (len(r.Warnings) == 0 || r.Warnings[0].Code != w.warning || r.Warnings[0].Detail == ""):
					t.Errorf("reading %d: warnings %v, want %s first", i, r.Warnings, w.warning)
				}
				if back, err := ParseSubject(r.Subject.String()); err != nil || back != r.Subject {
					t.Errorf("reading %d: %s is not canonical: %v", i, r.Subject, err)
				}
			}
		})
	}
}

func TestInterpretCanonicalAllocatesLittle(t *testing.T) {
	n := testing.AllocsPerRun(100, func() {
		if _, err := Interpret("09520123456788"); err != nil {
			t.Fatal(err)
		}
	})
	if n > 2 {
		t.Errorf("Interpret of a bare GTIN-14 allocates %v times", n)
	}
}

// CanonicalGTIN accepts only what Interpret reads as that one subject,
// unchanged and without warnings, and returns Interpret's subject.
func TestCanonicalGTINIsInterpret(t *testing.T) {
	ins := []string{"gtin:09520123456788", "gtin:09520123456789", "gtin:9520123456788", "gtin:009520123456788",
		"gtin: 9520123456788", " gtin:09520123456788", "gtin:09520123456788 ", "GTIN:09520123456788", "gln:09520123456788",
		"gtin:0952012345678x", "gtin:00000000000000", "09520123456788", "internal_sku:09520123456788", "gtin:0952-012345678"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := []byte("gtin:")
		for range 14 {
			b = append(b, byte('0'+rng.IntN(10)))
		}
		if rng.IntN(20) == 0 {
			b[5+rng.IntN(14)] = "x: -"[rng.IntN(4)]
		}
		ins = append(ins, string(b))
	}
	accepted := 0
	for _, in := range ins {
		sub, ok := CanonicalGTIN(in)
		rs, err := Interpret(in)
		if !ok {
			if err == nil && len(rs) == 1 && rs[0].Warnings == nil && rs[0].Subject.Namespace == NSGTIN && rs[0].Subject.String() == in {
				t.Errorf("%q: refused, but Interpret reads it as written", in)
			}
			continue
		}
		accepted++
		if err != nil || len(rs) != 1 || rs[0].Warnings != nil || rs[0].Subject != sub || sub.String() != in {
			t.Errorf("%q: %v, but Interpret reads %v, %v", in, sub, rs, err)
		}
	}
	if accepted < 150 {
		t.Errorf("only %d inputs accepted", accepted)
	}
}
