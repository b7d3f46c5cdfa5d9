package mcp_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
)

// callTool calls a tool with the full key and returns its structuredContent.
func callTool(t *testing.T, e *env, tool string, args map[string]any) map[string]any {
	t.Helper()
	r := e.post(t, 1, "tools/call", callParams(tool, args))
	sc, ok := ingesttest.Get(r.json, "result.structuredContent").(map[string]any)
	if r.status != 200 || !ok {
		t.Fatalf("%s: %d %.400s", tool, r.status, r.body)
	}
	return sc
}

func warned(m map[string]any, code string) bool {
	ws, _ := m["warnings"].([]any)
	for _, w := range ws {
		if w.(map[string]any)["code"] == code {
			return true
		}
	}
	return false
}

// TestIdentifierFormsFindTheProduct: the product tools and resolve_identifiers
// read identifiers in the forms people hold, echo the subject looked up and
// say what was stripped.
func TestIdentifierFormsFindTheProduct(t *testing.T) {
	e := newEnv(t)
	forms := []struct{ in, warning string }{
		{"952-0123-456788", "SEPARATORS_REMOVED"},
		{"9520 1234 5678 8", "SEPARATORS_REMOVED"},
		{"0109520123456788", "READ_AS_ELEMENT_STRING"},
		{"]C1010952012345678810ABC", "READ_AS_ELEMENT_STRING"},
		{"https://id.gs1.org/01/09520123456788/10/ABC", "READ_AS_DIGITAL_LINK"},
	}
	var ids []any
	for _, f := range forms {
		ids = append(ids, f.in)
		for _, tool := range []string{"get_product", "get_passport", "get_evidence"} {
			sc := callTool(t, e, tool, map[string]any{"identifier": f.in})
			if sc["status"] != "found" || ingesttest.Get(sc, "data.interpreted_as") != demoSub || !warned(sc, f.warning) {
				t.Errorf("%s %q: %v %v %v", tool, f.in, sc["status"], ingesttest.Get(sc, "data.interpreted_as"), sc["warnings"])
			}
		}
	}
	sc := callTool(t, e, "resolve_identifiers", map[string]any{"identifiers": ids})
	for i, it := range ingesttest.Get(sc, "data.items").([]any) {
		it := it.(map[string]any)
		if it["status"] != "found" || it["interpreted_as"] != demoSub || !warned(it, forms[i].warning) {
			t.Errorf("item %q: %v", forms[i].in, it)
		}
	}
	sc = callTool(t, e, "get_product", map[string]any{"identifier": "12345678905"})
	if ingesttest.Get(sc, "data.interpreted_as") != "gtin:00012345678905" || !warned(sc, "LEADING_ZEROS_ASSUMED") {
		t.Errorf("UPC-A without its leading zero: %v", sc)
	}
}

// TestAbsenceEchoesSubject: absences over MCP say what was looked
// up, and get_passport tells a known product without a passport from no
// product.
func TestAbsenceEchoesSubject(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		tool, in, interpreted string
		hasProduct            bool
	}{
		{"get_product", absent, absent, false},
		{"get_product", "ABC-1", "internal_sku:ABC-1", false},
		{"get_passport", absent, absent, false},
		{"get_passport", "4006381333931", "gtin:04006381333931", true},
		{"get_evidence", "gtin:04006381333931", "gtin:04006381333931", true},
	}
	for _, c := range cases {
		sc := callTool(t, e, c.tool, map[string]any{"identifier": c.in})
		if ingesttest.Get(sc, "data.interpreted_as") != c.interpreted || ingesttest.Get(sc, "data.has_product") != c.hasProduct || ingesttest.Get(sc, "data.input") != c.in {
			t.Errorf("%s %q: %v", c.tool, c.in, sc["data"])
		}
	}
	sc := callTool(t, e, "resolve_identifiers", map[string]any{"identifiers": []any{absent, "ABC-1"}})
	for i, want := range []string{absent, "internal_sku:ABC-1"} {
		if got := ingesttest.Get(sc, "data.items."+string(rune('0'+i))+".interpreted_as"); got != want {
			t.Errorf("item %d: interpreted_as %v, want %s", i, got, want)
		}
	}
}

// TestValidateCandidatesCarryTheirOwnVerdicts: validate_identifier on 13 digits gives
// each candidate its own format and validation and names the likely one.
func TestValidateCandidatesCarryTheirOwnVerdicts(t *testing.T) {
	e := newEnv(t)
	sc := callTool(t, e, "validate_identifier", map[string]any{"value": "4006381333931"})
	if sc["status"] != "ambiguous" || ingesttest.Get(sc, "data.likely.subject") != "gtin:04006381333931" {
		t.Fatalf("%v", sc)
	}
	for _, c := range ingesttest.Get(sc, "data.candidates").([]any) {
		c := c.(map[string]any)
		if c["format"] == nil || ingesttest.Get(c, "validation.technical") != "pass" {
			t.Errorf("candidate %v", c)
		}
	}
}

// offInput holds products as pds import off stores codes that fail their
// check digit: 2000000001273 (check digit 2, not 3) as a public internal
// SKU, 2000000001280 (9, not 0) as one only tenant acme may see.
var offInput = map[string]string{
	"sources.ndjson": `{"id":"22222222-0000-4000-8000-000000000001","kind":"partner_feed","origin":"https://world.openfoodfacts.org","trust_tier":1,"licence_name":"ODbL-1.0","may_redistribute_verbatim":true,"may_redistribute_derived":true,"covers":{"namespaces":["gtin","internal_sku"]}}
`,
	"products.ndjson": `{"identifiers":["internal_sku:off-2000000001273"],"manufacturer":"Bad Digit Foods","trust_level":"L1","status":"active","updated_at":"2026-01-01T00:00:00Z"}
{"identifiers":["internal_sku:off-2000000001280"],"manufacturer":"Acme Private Label","trust_level":"L1","status":"active","updated_at":"2026-01-01T00:00:00Z","tenant":"acme"}
`,
}

// A code that fails its check digit is INVALID_IDENTIFIER (it fails syntax
// in every namespace it could be in), but when the caller may see a product
// stored under it as an internal SKU, over REST and MCP alike the error names
// that subject, and asking for it finds the product.
func TestInvalidCodeNamesItsStoredSKU(t *testing.T) {
	in := t.TempDir()
	for name, body := range offInput {
		if err := os.WriteFile(filepath.Join(in, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	svc, secrets := ingesttest.Service(t, ingesttest.Build(t, in))
	e := serve(t, svc, secrets)
	const hint = "stored under this code as "
	cases := []struct {
		in, key, sku string // sku: the subject the error names, "" for none
	}{
		{"2000000001273", ingesttest.KeyFull, "internal_sku:off-2000000001273"},
		{" gtin:2000000001273 ", ingesttest.KeyFull, "internal_sku:off-2000000001273"},
		{"2000000001280", ingesttest.KeyAcme, "internal_sku:off-2000000001280"},
		{"2000000001280", ingesttest.KeyFull, ""}, // acme's product: another tenant hears nothing of it
		{"2000000001297", ingesttest.KeyFull, ""}, // nothing stored
	}
	for _, c := range cases {
		check := func(transport, detail string) {
			t.Helper()
			if c.sku == "" && strings.Contains(detail, hint) || c.sku != "" && !strings.Contains(detail, hint+c.sku) {
				t.Errorf("%s %q (%s): detail %q, want the SKU %q named", transport, c.in, c.key, detail, c.sku)
			}
		}
		for _, suffix := range []string{"", "/dpp", "/evidence"} {
			r := e.do(t, "GET", "/v1/products/"+url.PathEscape(c.in)+suffix, c.key, "", nil)
			checkProblem(t, r, "INVALID_IDENTIFIER")
			detail, _ := r.json["detail"].(string)
			check("REST"+suffix, detail)
		}
		r := e.do(t, "POST", "/v1/products/resolve", c.key, `{"identifiers":["`+c.in+`"]}`, nil)
		if got := ingesttest.Get(r.json, "data.items.0.status"); got != "invalid" {
			t.Fatalf("resolve %q: %d %s", c.in, r.status, r.body)
		}
		detail, _ := ingesttest.Get(r.json, "data.items.0.error.detail").(string)
		check("REST resolve", detail)
		for _, tool := range []string{"get_product", "get_passport", "get_evidence"} {
			params := callParams(tool, map[string]any{"identifier": c.in})
			m := e.do(t, "POST", "/v1/mcp", c.key, rpc(1, "tools/call", params), headers("tools/call", tool, nil))
			text, _ := ingesttest.Get(m.json, "result.content.0.text").(string)
			if ingesttest.Get(m.json, "result.isError") != true || !strings.Contains(text, "INVALID_IDENTIFIER") {
				t.Fatalf("MCP %s %q: %s", tool, c.in, m.body)
			}
			check("MCP "+tool, text)
		}
		if c.sku != "" {
			r := e.do(t, "GET", "/v1/products/"+c.sku, c.key, "", nil)
			if r.json["status"] != "found" || ingesttest.Get(r.json, "data.subject") != c.sku {
				t.Errorf("GET %s: %d %s", c.sku, r.status, r.body)
			}
		}
	}
}
