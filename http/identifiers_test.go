package http_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
)

// identifierForms are identifiers as people hold them, each naming the
// demo product, with the warning that says how it was read ("" when it was
// read as written).
var identifierForms = []struct {
	name, in, warning string
}{
	{"hyphens", "952-0123-456788", "SEPARATORS_REMOVED"},
	{"spaces", "9520 1234 5678 8", "SEPARATORS_REMOVED"},
	{"raw scanner data", "0109520123456788", "READ_AS_ELEMENT_STRING"},
	{"raw scanner data with a batch", "010952012345678810ABC", "READ_AS_ELEMENT_STRING"},
	{"scanner data with a symbology identifier", "]C1010952012345678810ABC", "READ_AS_ELEMENT_STRING"},
	{"element string", "(01)09520123456788(10)ABC", "READ_AS_ELEMENT_STRING"},
	{"Digital Link URI", "https://id.gs1.org/01/09520123456788/10/ABC?17=261231", "READ_AS_DIGITAL_LINK"},
	{"Digital Link URI with a GTIN-13", "https://example.com/01/9520123456788", "READ_AS_DIGITAL_LINK"},
	{"white space around", " 09520123456788 ", "WHITESPACE_REMOVED"},
	{"bare GTIN-14", demo, ""},
}

// TestIdentifierFormsFindTheProduct: identifiers in the forms people hold find
// their product at every product path (the URI percent-encoded as one
// segment), the answer echoes the subject looked up in data.interpreted_as,
// and what was stripped is a warning.
func TestIdentifierFormsFindTheProduct(t *testing.T) {
	e := newEnv(t)
	for _, f := range identifierForms {
		for _, view := range []string{"", "/dpp", "/evidence"} {
			t.Run(f.name+view, func(t *testing.T) {
				r := e.do(t, "GET", "/v1/products/"+url.PathEscape(f.in)+view, ingesttest.KeyFull, "")
				checkEnvelope(t, r)
				if r.status != 200 || r.json["status"] != "found" {
					t.Fatalf("%d %.400s", r.status, r.body)
				}
				if got := ingesttest.Get(r.json, "data.interpreted_as"); got != demoSub {
					t.Errorf("data.interpreted_as = %v, want %s", got, demoSub)
				}
				if got := ingesttest.Get(r.json, "data.subject"); got != demoSub {
					t.Errorf("data.subject = %v", got)
				}
				if f.warning != "" && !hasWarning(r.json, f.warning) {
					t.Errorf("no %s warning: %v", f.warning, r.json["warnings"])
				}
			})
		}
	}
	t.Run("a subject string is echoed by nothing", func(t *testing.T) {
		r := e.do(t, "GET", "/v1/products/"+demoSub, ingesttest.KeyFull, "")
		if _, ok := r.json["data"].(map[string]any)["interpreted_as"]; ok || r.json["warnings"] != nil {
			t.Errorf("a canonical subject is annotated: %.300s", r.body)
		}
	})
	t.Run("a UPC-A that lost its leading zero", func(t *testing.T) {
		r := e.do(t, "GET", "/v1/products/12345678905", ingesttest.KeyFull, "")
		if ingesttest.Get(r.json, "data.interpreted_as") != "gtin:00012345678905" || !hasWarning(r.json, "LEADING_ZEROS_ASSUMED") {
			t.Errorf("%.400s", r.body)
		}
	})
	t.Run("13 digits with separators stay ambiguous where both are stored", func(t *testing.T) {
		// gln:9520000000011 is linked to internal_sku:SITE-1, gtin:09520000000011 is a product.
		r := e.do(t, "GET", "/v1/products/952-0000-000011", ingesttest.KeyFull, "")
		if r.json["status"] != "ambiguous" || len(ingesttest.Get(r.json, "data.candidates").([]any)) != 2 {
			t.Errorf("%.400s", r.body)
		}
	})
	t.Run("a URI written into the path unescaped says how to send it", func(t *testing.T) {
		r := e.do(t, "GET", "/v1/products/https://id.gs1.org/01/09520123456788", ingesttest.KeyFull, "")
		if r.status != 404 || !strings.Contains(r.json["detail"].(string), "percent-encode") {
			t.Errorf("%d %s", r.status, r.body)
		}
	})
	t.Run("a URI with a key pds has no namespace for", func(t *testing.T) {
		r := e.do(t, "GET", "/v1/products/"+url.PathEscape("https://example.com/8004/9520ABC"), ingesttest.KeyFull, "")
		if r.status != 400 || r.json["code"] != "INVALID_IDENTIFIER" {
			t.Errorf("%d %s", r.status, r.body)
		}
	})
	t.Run("resolve items", func(t *testing.T) {
		var ids []string
		for _, f := range identifierForms {
			ids = append(ids, f.in)
		}
		r := e.do(t, "POST", "/v1/products/resolve", ingesttest.KeyFull, resolveBody(ids...))
		if r.status != 200 || r.json["status"] != "found" {
			t.Fatalf("%d %.600s", r.status, r.body)
		}
		items := ingesttest.Get(r.json, "data.items").([]any)
		for i, f := range identifierForms {
			it := items[i].(map[string]any)
			if it["status"] != "found" || it["subject"] != demoSub || it["interpreted_as"] != demoSub {
				t.Errorf("%s: %v", f.name, it)
			}
			if f.warning != "" && !hasWarning(it, f.warning) {
				t.Errorf("%s: no %s warning: %v", f.name, f.warning, it["warnings"])
			}
		}
	})
}

// TestAbsenceEchoesSubject: every absence says what was looked
// up (data.input, data.interpreted_as), and the passport tells a known
// product without a passport from no product.
func TestAbsenceEchoesSubject(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, path, status, interpreted string
		hasProduct                      bool
		subject                         string
	}{
		{"identity absent", "/v1/products/gtin:09520000000028", "not_found", "gtin:09520000000028", false, ""},
		{"bare value read as a SKU", "/v1/products/ABC-1", "unknown", "internal_sku:ABC-1", false, ""},
		{"GLN out of scope", "/v1/products/gln:9520000000028", "unknown", "gln:9520000000028", false, ""},
		{"passport of no product", "/v1/products/gtin:09520000000028/dpp", "not_found", "gtin:09520000000028", false, ""},
		{"passport of a known product without one", "/v1/products/4006381333931/dpp", "not_found", "gtin:04006381333931", true, bare},
		{"evidence of a known product without a passport", "/v1/products/gtin:04006381333931/evidence", "not_found", bare, true, bare},
		{"passport whose claims are all withheld", "/v1/products/" + shop + "/dpp", "unknown", shop, true, shop},
		{"passport of a linked identifier", "/v1/products/internal_sku:SITE-1/dpp", "not_found", "internal_sku:SITE-1", true, "internal_sku:SITE-1"},
		{"absent, with what was assumed", "/v1/products/12345678905/dpp", "unknown", "gtin:00012345678905", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(t, "GET", c.path, ingesttest.KeyFull, "")
			checkEnvelope(t, r)
			if r.status != 200 || r.json["status"] != c.status {
				t.Fatalf("%d %.400s", r.status, r.body)
			}
			d, ok := r.json["data"].(map[string]any)
			if !ok {
				t.Fatalf("data %v", r.json["data"])
			}
			if d["interpreted_as"] != c.interpreted || d["input"] == nil || d["has_product"] != c.hasProduct {
				t.Errorf("data %v", d)
			}
			if c.subject != "" && d["subject"] != c.subject {
				t.Errorf("data.subject %v, want %s", d["subject"], c.subject)
			}
			if ingesttest.Get(r.json, "meta.coverage") == nil {
				t.Error("no meta.coverage")
			}
		})
	}
	t.Run("resolve items", func(t *testing.T) {
		r := e.do(t, "POST", "/v1/products/resolve", ingesttest.KeyFull, resolveBody("gtin:09520000000028", "ABC-1", "12345678905"))
		want := []string{"gtin:09520000000028", "internal_sku:ABC-1", "gtin:00012345678905"}
		for i, it := range ingesttest.Get(r.json, "data.items").([]any) {
			if it.(map[string]any)["interpreted_as"] != want[i] {
				t.Errorf("item %d: %v", i, it)
			}
		}
	})
}

// TestValidateCandidatesCarryTheirOwnVerdicts: validating 13 digits under auto gives
// each candidate its own format and validation, and says which reading is
// the likely one and why.
func TestValidateCandidatesCarryTheirOwnVerdicts(t *testing.T) {
	e := newEnv(t)
	r := e.do(t, "POST", "/v1/identifiers/validate", ingesttest.KeyFull, `{"value":"4006381333931"}`)
	checkEnvelope(t, r)
	if r.json["status"] != "ambiguous" {
		t.Fatalf("%.400s", r.body)
	}
	want := map[string]string{"gtin": "GTIN-13", "gln": "GLN"}
	for _, c := range ingesttest.Get(r.json, "data.candidates").([]any) {
		c := c.(map[string]any)
		if c["format"] != want[c["namespace"].(string)] || ingesttest.Get(c, "validation.technical") != "pass" {
			t.Errorf("candidate %v", c)
		}
	}
	if ingesttest.Get(r.json, "data.likely.subject") != bare || ingesttest.Get(r.json, "data.likely.reason") == "" {
		t.Errorf("data.likely = %v", ingesttest.Get(r.json, "data.likely"))
	}
}

func hasWarning(m map[string]any, code string) bool {
	ws, _ := m["warnings"].([]any)
	for _, w := range ws {
		if w.(map[string]any)["code"] == code {
			return true
		}
	}
	return false
}

// A '+' in a path is a plus sign, as RFC 3986 has it; only a query string
// is form-encoded, where '+' is a space. So 09520+12345+6788 (the spaced
// GTIN form-encoded) is INVALID_IDENTIFIER saying how to send a space, the
// same value with %20 finds the product, a '+' inside a Digital Link
// URI's batch stays a '+', and in search's query '+' and %20 are the same.
func TestPlusInAPathIsAPlusSign(t *testing.T) {
	e := newEnv(t)
	for _, view := range []string{"", "/dpp", "/evidence"} {
		r := e.do(t, "GET", "/v1/products/09520+12345+6788"+view, ingesttest.KeyFull, "")
		detail, _ := r.json["detail"].(string)
		if r.status != 400 || r.json["code"] != "INVALID_IDENTIFIER" || !strings.Contains(detail, `"09520+12345+6788"`) ||
			!strings.Contains(detail, "write a space as %20") {
			t.Errorf("GET 09520+12345+6788%s: %d %s", view, r.status, r.body)
		}
		r = e.do(t, "GET", "/v1/products/09520%2012345%206788"+view, ingesttest.KeyFull, "")
		if r.json["status"] != "found" || ingesttest.Get(r.json, "data.interpreted_as") != demoSub {
			t.Errorf("GET 09520%%2012345%%206788%s: %d %.300s", view, r.status, r.body)
		}
	}
	r := e.do(t, "GET", "/v1/products/x+y", ingesttest.KeyFull, "")
	if detail, _ := r.json["detail"].(string); r.status != 400 || !strings.Contains(detail, `found '+'`) {
		t.Errorf("GET x+y: %d %s", r.status, r.body)
	}
	uri := url.PathEscape("https://id.gs1.org/01/09520123456788/10/AB") + "+12"
	r = e.do(t, "GET", "/v1/products/"+uri, ingesttest.KeyFull, "")
	if r.json["status"] != "found" || !strings.Contains(string(r.body), "(10) AB+12 set aside") {
		t.Errorf("GET %s: %d %.400s", uri, r.status, r.body)
	}
	plus := e.do(t, "GET", "/v1/products/search?manufacturer=demo+foods", ingesttest.KeyFull, "")
	space := e.do(t, "GET", "/v1/products/search?manufacturer=demo%20foods", ingesttest.KeyFull, "")
	if plus.status != 200 || len(items(plus)) == 0 || mustJSON(t, items(plus)) != mustJSON(t, items(space)) {
		t.Errorf("search demo+foods %d %.300s, demo%%20foods %.300s", plus.status, plus.body, space.body)
	}
}
