package domain_test

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/internal/fuzzseed"
)

func strp(s string) *string { return &s }

// AppendClaim writes the bytes AppendMarshal writes, for plain claims and for
// every case it hands to AppendMarshal.
func TestAppendClaimMatchesMarshal(t *testing.T) {
	conf := func(f float64) *float64 { return &f }
	full := domain.Claim{ID: "clm_1", Subject: "gtin:09520123456788", Predicate: "net_content",
		Object:    domain.ClaimObject{Value: json.RawMessage(`{"a":[1,2.5e3,null,"x\"y"]}`), Unit: strp("g"), Language: strp("de")},
		ClaimType: "FACT", Method: strp("m"), MethodVersion: strp("1"), SourceRef: strp("src"), PublisherRef: strp("pub"),
		EvidenceRefs: []string{"ev_1", "ev_2"}, VerificationStatus: "unverified", VerificationMethod: strp("v"),
		TrustLevel: "L2", Confidence: conf(0.5), PublishedAt: strp("2025-01-01"), RetrievedAt: "2025-01-02T00:00:00Z", SupersededBy: strp("clm_2")}
	tests := []struct {
		name string
		edit func(c *domain.Claim)
		err  bool
	}{
		{"every member", func(c *domain.Claim) {}, false},
		{"nothing set", func(c *domain.Claim) { *c = domain.Claim{} }, false},
		{"empty evidence refs omitted", func(c *domain.Claim) { c.EvidenceRefs = []string{} }, false},
		{"html and quotes", func(c *domain.Claim) { c.ID = `a<b>&"c"\d` }, false},
		{"control characters", func(c *domain.Claim) { c.Predicate = "a\tb\nc\x01\x1f\b\f\r" }, false},
		{"unicode", func(c *domain.Claim) { c.Subject = "Müller 食品 \U0001F600" }, false},
		{"line separators", func(c *domain.Claim) { c.Subject = "a\u2028b\u2029c" }, false},
		{"invalid utf-8", func(c *domain.Claim) { c.Subject = "a\xffb\xe2\x80" }, false},
		{"raw value with spaces", func(c *domain.Claim) { c.Object.Value = json.RawMessage(" { \"a\" : [ 1 , 2 ] }\n") }, false},
		{"raw value with html", func(c *domain.Claim) { c.Object.Value = json.RawMessage(`"<b>&</b>\u2028"`) }, false},
		{"raw value empty", func(c *domain.Claim) { c.Object.Value = json.RawMessage{} }, true},
		{"raw value not json", func(c *domain.Claim) { c.Object.Value = json.RawMessage(`{"a":`) }, true},
		{"raw value not utf-8", func(c *domain.Claim) { c.Object.Value = json.RawMessage("{\"a\xff\":[\"ab\xc3(\"]}") }, false},
		{"raw value not utf-8, with spaces", func(c *domain.Claim) { c.Object.Value = json.RawMessage("[ \"\xe2\x82\" ]") }, false},
		{"confidence zero", func(c *domain.Claim) { c.Confidence = conf(0) }, false},
		{"confidence negative zero", func(c *domain.Claim) { c.Confidence = conf(math.Copysign(0, -1)) }, false},
		{"confidence tiny", func(c *domain.Claim) { c.Confidence = conf(1e-9) }, false},
		{"confidence huge", func(c *domain.Claim) { c.Confidence = conf(-3e21) }, false},
		{"confidence NaN", func(c *domain.Claim) { c.Confidence = conf(math.NaN()) }, true},
		{"confidence infinite", func(c *domain.Claim) { c.Confidence = conf(math.Inf(1)) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := full
			tt.edit(&c)
			got, err := domain.AppendClaim([]byte("prefix"), &c)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			want, werr := domain.AppendMarshal([]byte("prefix"), &c)
			if (werr != nil) != tt.err {
				t.Fatalf("AppendMarshal err = %v, want error %v", werr, tt.err)
			}
			if string(got) != string(want) {
				t.Errorf("AppendClaim  = %s\nAppendMarshal = %s", got, want)
			}
			if !tt.err && (!utf8.Valid(got) || !json.Valid(got[len("prefix"):])) {
				t.Errorf("AppendClaim wrote what is not UTF-8 JSON: %q", got)
			}
		})
	}
}

// FuzzAppendJSONMatchesMarshal holds AppendClaim, AppendLocator and
// AppendPassportData to AppendMarshal's bytes (and errors) for values built
// from arbitrary strings, raw values and numbers, and every value they write
// to valid UTF-8 JSON; flags choose which optional members are set.
func FuzzAppendJSONMatchesMarshal(f *testing.F) {
	fuzzseed.Seed(f,
		[]any{"clm_1_1", "gtin:09520123456788", []byte(`{"a":[1,2]}`), "0.5", uint8(0xff)},
		[]any{"a<b>&\"c\"", "x\u2028y", []byte(` "é" `), "1e-7", uint8(0x55)},
		[]any{"\xff\x01", "Müller", []byte(`{"a":`), "NaN", uint8(0xaa)},
		[]any{"", "", []byte(``), "-0", uint8(0x01)},
		[]any{"net_content", "g", []byte(`500`), "-9223372036854775808", uint8(0xf1)},
		[]any{"a\xc3(", "M\xfcller", []byte("{\"v\xff\":[\"ab\xc3(\", \"\xed\xa0\x80\"]}"), "1", uint8(0xff)},
	)
	f.Fuzz(func(t *testing.T, s1, s2 string, raw []byte, num string, flags uint8) {
		same := func(what string, got []byte, err error, want []byte, werr error) {
			t.Helper()
			if (err != nil) != (werr != nil) {
				t.Fatalf("%s: err = %v, AppendMarshal err = %v", what, err, werr)
			}
			if string(got) != string(want) {
				t.Fatalf("%s = %q\nAppendMarshal = %q", what, got, want)
			}
			if err == nil && (!utf8.Valid(got) || !json.Valid(got[1:])) {
				t.Fatalf("%s wrote what is not UTF-8 JSON: %q", what, got)
			}
		}
		c := domain.Claim{ID: s1, Subject: s2, Predicate: s1 + s2, ClaimType: s2, TrustLevel: s1, RetrievedAt: s2}
		if flags&1 != 0 {
			c.Object.Value = json.RawMessage(raw)
		}
		if flags&2 != 0 {
			c.Object.Unit, c.Method, c.SourceRef, c.PublishedAt = &s1, &s2, &s1, &s2
		}
		if flags&4 != 0 {
			c.EvidenceRefs = []string{s2, s1}
		}
		if flags&8 != 0 {
			c.VerificationStatus, c.SupersededBy = s1, &s2
		}
		if flags&16 != 0 {
			if v, err := strconv.ParseFloat(num, 64); err == nil {
				c.Confidence = &v
			}
		}
		got, err := domain.AppendClaim([]byte("["), &c)
		want, werr := domain.AppendMarshal([]byte("["), &c)
		same("AppendClaim", got, err, want, werr)

		l := domain.Locator{Kind: s1}
		if flags&32 != 0 {
			l.ContentHash, l.Pointer = s2, s1+s2
		}
		if n, err := strconv.ParseInt(num, 10, 64); err == nil && flags&64 != 0 {
			l.Start, l.End = &n, &n
		}
		want, werr = domain.AppendMarshal([]byte("["), l)
		same("AppendLocator", domain.AppendLocator([]byte("["), l), nil, want, werr)

		d := domain.PassportData{Subject: s1, UpdatedAt: s2}
		if flags&32 != 0 {
			d.Attributes = map[string]json.RawMessage{s1: json.RawMessage(raw), s2: nil, s1 + s2: json.RawMessage(num)}
		}
		if flags&128 != 0 {
			d.Units = map[string]string{s2: s1, s1: s2}
		}
		got, err = domain.AppendPassportData([]byte("["), d)
		want, werr = domain.AppendMarshal([]byte("["), d)
		same("AppendPassportData", got, err, want, werr)
	})
}

func BenchmarkAppendClaim(b *testing.B) {
	c := domain.Claim{ID: "clm_1_1", Subject: "gtin:09520123456788", Predicate: "net_content",
		Object: domain.ClaimObject{Value: json.RawMessage(`500`), Unit: strp("g")}, ClaimType: "FACT",
		SourceRef: strp("src_1"), TrustLevel: "L2", RetrievedAt: "2025-01-02T00:00:00Z"}
	for _, bc := range []struct {
		name string
		enc  func([]byte, *domain.Claim) ([]byte, error)
	}{{"AppendClaim", domain.AppendClaim}, {"AppendMarshal", func(dst []byte, c *domain.Claim) ([]byte, error) { return domain.AppendMarshal(dst, c) }}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf, _ = bc.enc(buf[:0], &c)
			}
		})
	}
}

// AppendPassportData and AppendLocator write AppendMarshal's bytes where
// nil, empty and unsorted members differ.
func TestAppendPassportDataAndLocatorMatchMarshal(t *testing.T) {
	n := int64(-7)
	for _, d := range []domain.PassportData{
		{Subject: "gtin:1"},
		{Subject: "gtin:1", Attributes: map[string]json.RawMessage{}, Units: map[string]string{}},
		{Subject: "gtin:1", Attributes: map[string]json.RawMessage{"b": json.RawMessage(`1`), "a": nil, "é<": json.RawMessage(` [ 1 ] `), "A": json.RawMessage(`"x"`)},
			Units: map[string]string{"b": "g", "a\n": "ml"}, UpdatedAt: "2025-01-01T00:00:00Z"},
	} {
		got, err := domain.AppendPassportData(nil, d)
		want, werr := domain.AppendMarshal(nil, d)
		if err != nil || werr != nil || string(got) != string(want) {
			t.Errorf("AppendPassportData = %s, %v\nAppendMarshal      = %s, %v", got, err, want, werr)
		}
	}
	for _, l := range []domain.Locator{{}, {Kind: "byte_range", Start: &n, End: &n}, {Kind: "json_pointer", Pointer: "/a~1b/\"c\""}, {Kind: "content_hash", ContentHash: "sha256:00"}} {
		want, _ := domain.AppendMarshal(nil, l)
		if got := domain.AppendLocator(nil, l); string(got) != string(want) {
			t.Errorf("AppendLocator = %s, AppendMarshal = %s", got, want)
		}
	}
}

func TestSortedKeys(t *testing.T) {
	cases := []struct {
		m    map[string]int
		want []string
	}{
		{nil, []string{}},
		{map[string]int{}, []string{}},
		{map[string]int{"b": 1, "a": 2, "B": 3, "ä": 4, "a\x00": 5}, []string{"B", "a", "a\x00", "b", "ä"}},
	}
	for _, c := range cases {
		got := domain.SortedKeys(c.m)
		if !slices.Equal(got, c.want) || got == nil {
			t.Errorf("SortedKeys(%v) = %q, want %q", c.m, got, c.want)
		}
		if cap(got) != len(c.m) { // one allocation, of the right size
			t.Errorf("SortedKeys(%v): capacity %d, want %d", c.m, cap(got), len(c.m))
		}
	}
}
