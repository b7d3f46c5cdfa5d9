package http_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/ingest/ingesttest"
)

// consistencyInput is a small input whose values test how answers are written:
// a manufacturer with & and <>, a product with neither brand nor
// manufacturer GLN, a claim with a unit and one without method or
// confidence, a source that does not say whether it is enabled and a
// document without url.
var consistencyInput = map[string]string{
	"sources.ndjson": `{"id":"11111111-0000-4000-8000-000000000001","kind":"registry","origin":"https://registry.example","trust_tier":4,"licence_name":"CC-BY-4.0","may_redistribute_verbatim":true,"attribution_required":"Data: Scott & Kowalski <Registry>","covers":{"namespaces":["gtin"]}}
`,
	"products.ndjson": `{"identifiers":["gtin:09520123456788"],"manufacturer":"Scott & Kowalski <Foods>","manufacturer_gln":"9520123400002","brand":"S&K","trust_level":"L3","status":"active","updated_at":"2026-01-01T00:00:00Z"}
{"identifiers":["gtin:04006381333931"],"manufacturer":"Plain AG","trust_level":"L1","status":"active","updated_at":"2026-01-01T00:00:00Z"}
`,
	"claims.ndjson": `{"id":"c1","subject":"gtin:09520123456788","predicate":"net_content","object":{"value":1,"unit":"l"},"claim_type":"SOURCE ASSERTION","source_ref":"11111111-0000-4000-8000-000000000001","trust_level":"L3","retrieved_at":"2026-01-01T00:00:00Z"}
{"id":"c2","subject":"gtin:09520123456788","predicate":"name","object":{"value":"Oats & More <1 l>","language":"en"},"claim_type":"SOURCE ASSERTION","source_ref":"11111111-0000-4000-8000-000000000001","trust_level":"L3","retrieved_at":"2026-01-01T00:00:00Z"}
`,
	"documents.ndjson": `{"id":"d1","source_id":"11111111-0000-4000-8000-000000000001","media_type":"application/json","content_hash":"sha256:` + strings.Repeat("a", 64) + `","size":10,"retrieved_at":"2026-01-01T00:00:00Z"}
`,
	"evidence.ndjson": `{"id":"e1","claim_id":"c1","document_id":"d1","locator":{"kind":"json_pointer","pointer":"/net_content"}}
`,
}

// newConsistencyEnv serves consistencyInput.
func newConsistencyEnv(t *testing.T) *env {
	t.Helper()
	in := t.TempDir()
	for name, body := range consistencyInput {
		if err := os.WriteFile(filepath.Join(in, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap := ingesttest.Build(t, in)
	svc, secrets := ingesttest.Service(t, snap)
	srv := httptest.NewServer(pdshttp.New(svc, ingesttest.Logger(t), nil))
	t.Cleanup(srv.Close)
	return &env{url: srv.URL, keys: secrets, snap: snap, svc: svc}
}

// Null or omitted, one rule: a member that may have no value and whose type
// allows null is always there, null when empty (identity manufacturer_gln
// like brand, a document's url, a claim's method); a member whose type does
// not allow null is left out when empty (a claim's confidence); a source's
// enabled is always said.
func TestNullOrOmittedOneRule(t *testing.T) {
	e := newConsistencyEnv(t)
	plain := e.do(t, "GET", "/v1/products/04006381333931", ingesttest.KeyFull, "")
	for _, m := range []string{`"brand":null`, `"manufacturer_gln":null`} {
		if !strings.Contains(string(plain.body), m) {
			t.Errorf("identity without brand and GLN lacks %s: %s", m, plain.body)
		}
	}
	full := e.do(t, "GET", "/v1/products/09520123456788", ingesttest.KeyFull, "")
	if got := ingesttest.Get(full.json, "data.manufacturer_gln"); got != "9520123400002" {
		t.Errorf("manufacturer_gln %v", got)
	}
	ev := e.do(t, "GET", "/v1/products/09520123456788/evidence", ingesttest.KeyFull, "")
	body := string(ev.body)
	for _, m := range []string{`"url":null`, `"method":null`, `"enabled":true`} {
		if !strings.Contains(body, m) {
			t.Errorf("evidence lacks %s: %s", m, body)
		}
	}
	if strings.Contains(body, `"confidence"`) {
		t.Errorf("a claim without confidence shows the member (it is a number, never null): %s", body)
	}
	src := e.do(t, "GET", "/v1/sources/11111111-0000-4000-8000-000000000001", ingesttest.KeyFull, "")
	if got := ingesttest.Get(src.json, "data.enabled"); got != true {
		t.Errorf("source enabled %v, want true when the input does not say: %s", got, src.body)
	}
}

// A passport keeps a claim's unit: net_content 1 l is attributes.net_content
// 1 (predicate to value, as decisions section 6 has it) with units.net_content
// "l"; a value without unit has no entry in units.
func TestPassportAttributesKeepUnits(t *testing.T) {
	e := newConsistencyEnv(t)
	r := e.do(t, "GET", "/v1/products/09520123456788/dpp", ingesttest.KeyFull, "")
	if got := ingesttest.Get(r.json, "data.attributes.net_content"); got != float64(1) {
		t.Errorf("net_content attribute %v, want 1: %s", got, r.body)
	}
	if got := ingesttest.Get(r.json, "data.units"); !reflect.DeepEqual(got, map[string]any{"net_content": "l"}) {
		t.Errorf("data.units %v, want net_content l only: %s", got, r.body)
	}
	if got := ingesttest.Get(r.json, "data.attributes.name"); got != "Oats & More <1 l>" {
		t.Errorf("name attribute %v", got)
	}
}

// REST bodies refuse a member the operation does not take, as MCP tool
// arguments do and search does with an unknown parameter, naming it.
func TestUnknownMembersRefused(t *testing.T) {
	e := newEnv(t)
	cases := []struct{ path, body, member string }{
		{"/v1/identifiers/validate", `{"value":"09520123456788","id":1}`, "'id'"},
		{"/v1/identifiers/validate", `{"Value":"09520123456788"}`, "'Value'"},
		{"/v1/products/resolve", `{"identifiers":["09520123456788"],"limit":5}`, "'limit'"},
		{"/v1/digital-links/resolve", `{"uri":"https://id.gs1.org/01/09520123456788","strict":true}`, "'strict'"},
	}
	for _, c := range cases {
		r := e.do(t, "POST", c.path, ingesttest.KeyFull, c.body)
		checkEnvelope(t, r)
		detail, _ := r.json["detail"].(string)
		if r.status != 400 || r.json["code"] != "INVALID_REQUEST" || !strings.Contains(detail, c.member) {
			t.Errorf("POST %s %s: %d %s", c.path, c.body, r.status, r.body)
		}
		if strings.Contains(detail, "json:") {
			t.Errorf("detail shows Go decoder text: %s", detail)
		}
	}
	r := e.do(t, "GET", "/v1/products/search?manufacturer=demo&colour=red", ingesttest.KeyFull, "")
	if r.status != 400 || r.json["code"] != "INVALID_FILTER" || !strings.Contains(string(r.body), "colour") {
		t.Errorf("search with an unknown parameter: %d %s", r.status, r.body)
	}
}

// OPTIONS and HEAD: every path answers OPTIONS with 204 and an Allow it keeps
// (a method Allow lists never answers 405), HEAD like GET without a body;
// /v1/mcp takes POST only and its Allow says so.
func TestOptionsAndHeadOnEveryPath(t *testing.T) {
	e := newEnv(t)
	paths := []string{"/v1/whoami", "/v1/products/" + demo, "/v1/products/" + demo + "/dpp", "/v1/products/" + demo + "/evidence",
		"/v1/products/search", "/v1/products/resolve", "/v1/identifiers/validate", "/v1/digital-links/resolve", "/v1/sources/" + srcReg,
		"/v1/openapi.json", "/livez", "/readyz"}
	for _, p := range paths {
		r := e.do(t, "OPTIONS", p, ingesttest.KeyFull, "")
		allow := r.header.Get("Allow")
		if r.status != 204 || !strings.Contains(allow, "OPTIONS") {
			t.Errorf("OPTIONS %s: %d, Allow %q", p, r.status, allow)
		}
		if strings.Contains(allow, "HEAD") {
			h := e.do(t, "HEAD", p, ingesttest.KeyFull, "")
			if h.status != 200 || len(h.body) != 0 {
				t.Errorf("HEAD %s: %d with %d body bytes", p, h.status, len(h.body))
			}
			g := e.do(t, "GET", p, ingesttest.KeyFull, "")
			if g.header.Get("Content-Type") != h.header.Get("Content-Type") {
				t.Errorf("HEAD %s: content type %q, GET %q", p, h.header.Get("Content-Type"), g.header.Get("Content-Type"))
			}
		}
	}
}

// A REST 403 names the REST call, never an MCP tool.
func TestForbiddenNamesTheRESTCall(t *testing.T) {
	e := newEnv(t)
	tools := []string{"validate_identifier", "resolve_identifiers", "get_product", "get_passport", "get_evidence", "search_products",
		"parse_digital_link", "get_source", "whoami"}
	cases := []struct{ method, path, body, call string }{
		{"GET", "/v1/sources/" + srcReg, "", "GET /v1/sources/{source_id}"},
		{"POST", "/v1/products/resolve", `{"identifiers":["x"]}`, "POST /v1/products/resolve"},
		{"GET", "/v1/products/search?manufacturer=demo", "", "GET /v1/products/search"},
		{"POST", "/v1/identifiers/validate", `{"value":"1"}`, "POST /v1/identifiers/validate"},
	}
	for _, c := range cases {
		r := e.do(t, c.method, c.path, ingesttest.KeyReadOnly, c.body)
		detail, _ := r.json["detail"].(string)
		if r.status != 403 || !strings.Contains(detail, c.call) {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.status, r.body)
		}
		for _, tool := range tools {
			if strings.Contains(detail, tool) {
				t.Errorf("%s %s: the 403 names the MCP tool %s: %s", c.method, c.path, tool, detail)
			}
		}
	}
}

// JSON is written without HTML escaping: & < > appear as themselves in
// precomputed views (identity, passport, evidence, sources), in envelopes
// encoded per request (validate, search) and in problems.
func TestNoHTMLEscaping(t *testing.T) {
	e := newConsistencyEnv(t)
	cases := []struct{ method, path, body, want string }{
		{"GET", "/v1/products/09520123456788", "", `"manufacturer":"Scott & Kowalski <Foods>","manufacturer_gln":"9520123400002","brand":"S&K"`},
		{"GET", "/v1/products/09520123456788/dpp", "", `"name":"Oats & More <1 l>"`},
		{"GET", "/v1/products/09520123456788/evidence", "", `"attribution_required":"Data: Scott & Kowalski <Registry>"`},
		{"GET", "/v1/sources/11111111-0000-4000-8000-000000000001", "", `Scott & Kowalski <Registry>`},
		{"POST", "/v1/products/resolve", `{"identifiers":["09520123456788"]}`, `"manufacturer":"Scott & Kowalski <Foods>"`},
		{"GET", "/v1/products/search?manufacturer=scott%20%26%20kowalski", "", `"manufacturer":"Scott & Kowalski <Foods>"`},
		{"POST", "/v1/identifiers/validate", `{"value":"A&B<1>"}`, `"input":"A&B<1>"`},
		{"POST", "/v1/identifiers/validate", `{"value":"1","a&b":1}`, `'a&b'`},
	}
	for _, c := range cases {
		r := e.do(t, c.method, c.path, ingesttest.KeyFull, c.body)
		b := string(r.body)
		if strings.Contains(b, `\u0026`) || strings.Contains(b, `\u003c`) || strings.Contains(b, `\u003e`) || !strings.Contains(b, c.want) {
			t.Errorf("%s %s: want %s unescaped: %s", c.method, c.path, c.want, b)
		}
	}
}

// Search scores: without a manufacturer nothing is scored and score is null
// (not 0 for every item); with one, the manufacturer's one-typo name scores
// as a near match (above 0.9).
func TestSearchScoresNullWithoutManufacturer(t *testing.T) {
	e := newConsistencyEnv(t)
	r := e.do(t, "GET", "/v1/products/search", ingesttest.KeyFull, "")
	its := items(r)
	if len(its) != 2 {
		t.Fatalf("search without manufacturer: %s", r.body)
	}
	for _, it := range its {
		if v, ok := it["score"]; !ok || v != nil {
			t.Errorf("item without a manufacturer query: score %v (present %v), want null", v, ok)
		}
	}
	r = e.do(t, "GET", "/v1/products/search?manufacturer=scott%20kowalsky%20foods", ingesttest.KeyFull, "")
	its = items(r)
	if len(its) == 0 {
		t.Fatalf("search: %s", r.body)
	}
	if s, _ := its[0]["score"].(float64); s <= 0.9 {
		t.Errorf("one typo in the whole name scores %v: %s", s, r.body)
	}
}
