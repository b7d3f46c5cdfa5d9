package http_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/service"
)

var update = flag.Bool("update", false, "rewrite golden files")

type env struct {
	url  string
	keys map[string]string
	snap string
	svc  *service.Service
}

func newEnv(t *testing.T) *env {
	t.Helper()
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	svc, secrets := ingesttest.Service(t, snap)
	srv := httptest.NewServer(pdshttp.New(svc, ingesttest.Logger(t), nil))
	t.Cleanup(srv.Close)
	return &env{url: srv.URL, keys: secrets, snap: snap, svc: svc}
}

type response struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
}

func (e *env) do(t *testing.T, method, path, key, body string, hdr ...string) response {
	t.Helper()
	req := ingesttest.NewRequest(t, method, e.url+path, e.keys[key], body)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	var r response
	r.status, r.header, r.body, r.json = ingesttest.Send(t, req)
	return r
}

var (
	reqIDPattern = regexp.MustCompile(`^req_[0-9A-HJKMNP-TV-Z]{26}$`)
	codePattern  = regexp.MustCompile(`^[A-Z][A-Z0-9_]+$`)
)

// checkEnvelope holds every response to the rules of spec 2.1 and 2.7.
func checkEnvelope(t *testing.T, r response) {
	t.Helper()
	id := r.header.Get("X-Request-Id")
	if !reqIDPattern.MatchString(id) {
		t.Errorf("x-request-id %q does not match the pattern", id)
	}
	if r.status == 200 {
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("content-type %q", ct)
		}
		if r.json["request_id"] != id {
			t.Errorf("request_id %v differs from header %q", r.json["request_id"], id)
		}
		switch st := r.json["status"]; st {
		case "found", "not_found", "unknown", "ambiguous", "partial":
		default:
			t.Errorf("status %v", st)
		}
		if r.json["status"] == "unknown" && r.json["reason"] == nil {
			t.Errorf("unknown without reason")
		}
		d, ok := ingesttest.Get(r.json, "meta.duration_ms").(float64)
		if !ok || d != float64(int64(d)) {
			t.Errorf("meta.duration_ms %v is not an integer", ingesttest.Get(r.json, "meta.duration_ms"))
		}
		return
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("error content-type %q", ct)
	}
	for _, f := range []string{"type", "title", "status", "code", "retryable", "request_id"} {
		if _, ok := r.json[f]; !ok {
			t.Errorf("problem lacks %s: %s", f, r.body)
		}
	}
	if s, _ := r.json["status"].(float64); int(s) != r.status {
		t.Errorf("problem status %v, HTTP %d", r.json["status"], r.status)
	}
	if c, _ := r.json["code"].(string); !codePattern.MatchString(c) {
		t.Errorf("code %q", c)
	}
	if ty, _ := r.json["type"].(string); !strings.HasPrefix(ty, "https://") {
		t.Errorf("type %q is not an absolute URI", ty)
	}
	if r.json["request_id"] != id {
		t.Errorf("problem request_id %v differs from header %q", r.json["request_id"], id)
	}
}

const (
	demo    = "09520123456788"
	demoSub = "gtin:" + demo
	shop    = "gtin:09520000000011"
	bare    = "gtin:04006381333931"
	srcReg  = "11111111-0000-4000-8000-000000000001"
	srcAcme = "11111111-0000-4000-8000-000000000004"
)

func TestREST(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, method, path, key, body string
		hdr                           []string
		status                        int
		code                          string         // problem code, for errors
		want                          map[string]any // dotted path -> value
		golden                        string         // golden file name, if any
	}{
		// Authentication and scopes.
		{name: "no key", method: "GET", path: "/v1/whoami", status: 401, code: "UNAUTHENTICATED"},
		{name: "bad key", method: "GET", path: "/v1/whoami", hdr: []string{"Authorization", "Bearer pds_nope"}, status: 401, code: "UNAUTHENTICATED"},
		{name: "not bearer", method: "GET", path: "/v1/whoami", hdr: []string{"Authorization", "Basic eDp5"}, status: 401, code: "UNAUTHENTICATED"},
		{name: "whoami", method: "GET", path: "/v1/whoami", key: ingesttest.KeyAcme, status: 200, want: map[string]any{"status": "found", "data.tenant": "acme", "data.scopes.0": "identifiers:validate"}},
		{name: "missing scope", method: "GET", path: "/v1/sources/" + srcReg, key: ingesttest.KeyReadOnly, status: 403, code: "FORBIDDEN"},
		{name: "whoami needs no scope", method: "GET", path: "/v1/whoami", key: ingesttest.KeyNoScope, status: 200},
		// Routing.
		{name: "unknown route", method: "GET", path: "/v1/nothing", key: ingesttest.KeyFull, status: 404, code: "ROUTE_NOT_FOUND"},
		{name: "wrong method", method: "DELETE", path: "/v1/whoami", key: ingesttest.KeyFull, status: 405, code: "METHOD_NOT_ALLOWED"},
		{name: "GET resolve", method: "GET", path: "/v1/products/resolve", key: ingesttest.KeyFull, status: 405, code: "METHOD_NOT_ALLOWED"},
		{name: "POST search", method: "POST", path: "/v1/products/search", key: ingesttest.KeyFull, body: "{}", status: 405, code: "METHOD_NOT_ALLOWED"},
		{name: "POST product", method: "POST", path: "/v1/products/" + demo, key: ingesttest.KeyFull, body: "{}", status: 405, code: "METHOD_NOT_ALLOWED"},
		// Identity.
		{name: "identity by subject", method: "GET", path: "/v1/products/" + demoSub, key: ingesttest.KeyFull, status: 200, golden: "identity-found",
			want: map[string]any{"status": "found", "data.subject": demoSub, "data.has_passport": true, "data.identifiers.1": "internal_sku:SKU-1"}},
		{name: "identity by bare 13 digits", method: "GET", path: "/v1/products/9520123456788", key: ingesttest.KeyFull, status: 200, want: map[string]any{"status": "found", "data.subject": demoSub}},
		{name: "identity by linked sku", method: "GET", path: "/v1/products/internal_sku:SKU-1", key: ingesttest.KeyFull, status: 200, want: map[string]any{"data.subject": demoSub}},
		{name: "identity by bare sku", method: "GET", path: "/v1/products/SKU-1", key: ingesttest.KeyFull, status: 200, want: map[string]any{"data.subject": demoSub}},
		{name: "identity absent covered", method: "GET", path: "/v1/products/gtin:09520000000028", key: ingesttest.KeyFull, status: 200, golden: "identity-not-found",
			want: map[string]any{"status": "not_found", "meta.coverage.sources_consulted.0": srcReg}},
		{name: "identity absent uncovered", method: "GET", path: "/v1/products/00012345678905", key: ingesttest.KeyFull, status: 200,
			want: map[string]any{"status": "unknown", "reason": "NO_SOURCE"}},
		{name: "identity absent disabled source", method: "GET", path: "/v1/products/04006381333948", key: ingesttest.KeyFull, status: 200,
			want: map[string]any{"status": "unknown", "reason": "NO_SOURCE", "meta.coverage.sources_skipped.0.reason": "DISABLED"}},
		{name: "bad check digit", method: "GET", path: "/v1/products/09520123456789", key: ingesttest.KeyFull, status: 400, code: "INVALID_IDENTIFIER"},
		{name: "bad namespace", method: "GET", path: "/v1/products/isbn:123", key: ingesttest.KeyFull, status: 400, code: "INVALID_IDENTIFIER"},
		{name: "gln out of scope", method: "GET", path: "/v1/products/gln:9520000000028", key: ingesttest.KeyFull, status: 200, want: map[string]any{"status": "unknown", "reason": "OUT_OF_SCOPE"}},
		{name: "sscc out of scope", method: "GET", path: "/v1/products/095200000000000003", key: ingesttest.KeyFull, status: 0},
		{name: "private product hidden", method: "GET", path: "/v1/products/internal_sku:ACME-7", key: ingesttest.KeyFull, status: 200,
			want: map[string]any{"status": "unknown", "reason": "NO_SOURCE", "meta.coverage.sources_consulted": "[]"}},
		{name: "private product owner", method: "GET", path: "/v1/products/internal_sku:ACME-7", key: ingesttest.KeyAcme, status: 200, want: map[string]any{"status": "found"}},
		// Passport.
		{name: "passport", method: "GET", path: "/v1/products/" + demo + "/dpp", key: ingesttest.KeyFull, status: 200, golden: "passport-public",
			want: map[string]any{"status": "found", "data.attributes.name": "New name", "validation.technical": "fail", "meta.coverage.sources_skipped.0.reason": "LICENCE_RESTRICTED"}},
		{name: "passport tenant view", method: "GET", path: "/v1/products/" + demo + "/dpp", key: ingesttest.KeyAcme, status: 200,
			want: map[string]any{"data.attributes.name": "Acme's own name"}},
		{name: "passport licence restricted", method: "GET", path: "/v1/products/" + shop + "/dpp", key: ingesttest.KeyFull, status: 200,
			want: map[string]any{"status": "unknown", "reason": "LICENCE_RESTRICTED", "warnings.0.code": "CLAIMS_WITHHELD"}},
		{name: "passport none", method: "GET", path: "/v1/products/" + bare + "/dpp", key: ingesttest.KeyFull, status: 200, want: map[string]any{"status": "not_found"}},
		{name: "passport absent", method: "GET", path: "/v1/products/gtin:09520000000028/dpp", key: ingesttest.KeyFull, status: 200, want: map[string]any{"status": "not_found"}},
		{name: "passport invalid", method: "GET", path: "/v1/products/abc%20def/dpp", key: ingesttest.KeyFull, status: 400, code: "INVALID_IDENTIFIER"},
		// Evidence.
		{name: "evidence", method: "GET", path: "/v1/products/" + demo + "/evidence", key: ingesttest.KeyFull, status: 200, golden: "evidence-public",
			want: map[string]any{"status": "found", "data.subject": demoSub}},
		{name: "evidence tenant sees its link", method: "GET", path: "/v1/products/" + demo + "/evidence", key: ingesttest.KeyAcme, status: 200},
		// Sources.
		{name: "source", method: "GET", path: "/v1/sources/" + srcReg, key: ingesttest.KeyFull, status: 200, golden: "source",
			want: map[string]any{"status": "found", "data.operator.name": "GS1 Demo Registry Ltd", "data.attribution_required": "Data: Demo Registry (CC BY 4.0)"}},
		{name: "tenant source hidden", method: "GET", path: "/v1/sources/" + srcAcme, key: ingesttest.KeyFull, status: 200, want: map[string]any{"status": "not_found"}},
		{name: "tenant source owner", method: "GET", path: "/v1/sources/" + srcAcme, key: ingesttest.KeyAcme, status: 200, want: map[string]any{"status": "found", "data.kind": "tenant_upload"}},
		{name: "source unknown", method: "GET", path: "/v1/sources/22222222-0000-4000-8000-000000000001", key: ingesttest.KeyFull, status: 200, want: map[string]any{"status": "not_found"}},
		{name: "source not uuid", method: "GET", path: "/v1/sources/registry", key: ingesttest.KeyFull, status: 400, code: "INVALID_IDENTIFIER"},
		// Request bodies.
		{name: "validate wrong media type", method: "POST", path: "/v1/identifiers/validate", key: ingesttest.KeyFull, body: `{"value":"1"}`, hdr: []string{"Content-Type", "text/plain"}, status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "validate not json", method: "POST", path: "/v1/identifiers/validate", key: ingesttest.KeyFull, body: `{"value":`, status: 400, code: "INVALID_REQUEST"},
		{name: "validate missing value", method: "POST", path: "/v1/identifiers/validate", key: ingesttest.KeyFull, body: `{}`, status: 400, code: "INVALID_REQUEST"},
		{name: "validate wrong type", method: "POST", path: "/v1/identifiers/validate", key: ingesttest.KeyFull, body: `{"value":12}`, status: 400, code: "INVALID_REQUEST"},
		{name: "validate too long", method: "POST", path: "/v1/identifiers/validate", key: ingesttest.KeyFull, body: `{"value":"` + strings.Repeat("a", 257) + `"}`, status: 400, code: "INVALID_REQUEST"},
		{name: "validate body too large", method: "POST", path: "/v1/identifiers/validate", key: ingesttest.KeyFull, body: `{"value":"` + strings.Repeat("a", 2<<20) + `"}`, status: 413, code: "PAYLOAD_TOO_LARGE"},
		{name: "validate unsupported namespace", method: "POST", path: "/v1/identifiers/validate", key: ingesttest.KeyFull, body: `{"value":"1","namespace":"isbn"}`, status: 400, code: "UNSUPPORTED_NAMESPACE"},
		{name: "validate ok", method: "POST", path: "/v1/identifiers/validate", key: ingesttest.KeyFull, body: `{"value":"09520123456788"}`, status: 200,
			want: map[string]any{"status": "found", "data.valid": true, "data.subject": demoSub}},
		{name: "validate ambiguous", method: "POST", path: "/v1/identifiers/validate", key: ingesttest.KeyFull, body: `{"value":"9520123456788"}`, status: 200, golden: "validate-ambiguous",
			want: map[string]any{"status": "ambiguous"}},
		{name: "validate bad check digit is 200", method: "POST", path: "/v1/identifiers/validate", key: ingesttest.KeyFull, body: `{"value":"09520123456789"}`, status: 200,
			want: map[string]any{"data.valid": false, "validation.technical": "fail", "data.expected_check_digit": "8"}},
		{name: "validate element string", method: "POST", path: "/v1/identifiers/validate", key: ingesttest.KeyFull, body: `{"value":"(01)09520123456788(17)261231(10)AB12"}`, status: 200, golden: "validate-element-string",
			want: map[string]any{"status": "found", "data.namespace": "gtin", "data.subject": demoSub, "data.elements.0.ai": "17", "data.elements.1.value": "AB12",
				"data.digital_link": "https://id.gs1.org/01/09520123456788/10/AB12?17=261231"}},
		{name: "validate scanner data", method: "POST", path: "/v1/identifiers/validate", key: ingesttest.KeyFull, body: `{"value":"]d2010952012345678810AB12\u001d17261231"}`, status: 200,
			want: map[string]any{"data.valid": true, "data.subject": demoSub, "data.symbology_identifier": "]d2", "data.element_string": "(01)09520123456788(10)AB12(17)261231"}},
		{name: "validate invalid element string is 200", method: "POST", path: "/v1/identifiers/validate", key: ingesttest.KeyFull, body: `{"value":"(01)09520123456789(10)AB"}`, status: 200,
			want: map[string]any{"data.valid": false, "data.namespace": "element_string", "validation.technical": "fail", "warnings.0.code": "INVALID_FORMAT"}},
		{name: "identity by element string", method: "GET", path: "/v1/products/(01)09520123456788(17)261231(10)AB12", key: ingesttest.KeyFull, status: 200,
			want: map[string]any{"status": "found", "data.subject": demoSub}},
		{name: "identity by scanner data", method: "GET", path: "/v1/products/%5DC10109520123456788" + "10AB%1D21S1", key: ingesttest.KeyFull, status: 200,
			want: map[string]any{"status": "found", "data.subject": demoSub}},
		{name: "passport by element string", method: "GET", path: "/v1/products/(01)09520123456788(10)AB/dpp", key: ingesttest.KeyFull, status: 200, want: map[string]any{"status": "found"}},
		{name: "identity by invalid element string", method: "GET", path: "/v1/products/(01)09520123456789", key: ingesttest.KeyFull, status: 400, code: "INVALID_IDENTIFIER"},
		{name: "identity by element string without a pds key", method: "GET", path: "/v1/products/(8004)9520ABC", key: ingesttest.KeyFull, status: 400, code: "INVALID_IDENTIFIER"},
		{name: "resolve element strings", method: "POST", path: "/v1/products/resolve", key: ingesttest.KeyFull, body: `{"identifiers":["(01)09520123456788(10)AB","(01)09520123456789"]}`, status: 200,
			want: map[string]any{"data.items.0.status": "found", "data.items.0.subject": demoSub}},
		{name: "digital link", method: "POST", path: "/v1/digital-links/resolve", key: ingesttest.KeyFull, body: `{"uri":"https://id.gs1.org/01/09520123456788/10/ABC123"}`, status: 200, golden: "digital-link",
			want: map[string]any{"data.primary.subject": demoSub, "data.element_string": "(01)09520123456788(10)ABC123"}},
		{name: "digital link malformed", method: "POST", path: "/v1/digital-links/resolve", key: ingesttest.KeyFull, body: `{"uri":"not a uri"}`, status: 400, code: "MALFORMED_URI"},
		{name: "digital link missing uri", method: "POST", path: "/v1/digital-links/resolve", key: ingesttest.KeyFull, body: `{}`, status: 400, code: "INVALID_REQUEST"},
		{name: "digital link no primary", method: "POST", path: "/v1/digital-links/resolve", key: ingesttest.KeyFull, body: `{"uri":"https://example.com/about"}`, status: 400, code: "NO_PRIMARY_IDENTIFIER"},
		{name: "digital link unsupported form", method: "POST", path: "/v1/digital-links/resolve", key: ingesttest.KeyFull, body: `{"uri":"https://example.com/gtin/09520123456788"}`, status: 400, code: "UNSUPPORTED_URI_FORM"},
		{name: "digital link bad key", method: "POST", path: "/v1/digital-links/resolve", key: ingesttest.KeyFull, body: `{"uri":"https://example.com/01/09520123456789"}`, status: 400, code: "INVALID_IDENTIFIER"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(t, c.method, c.path, c.key, c.body, c.hdr...)
			checkEnvelope(t, r)
			if c.status != 0 && r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if c.status == 0 && r.status >= 500 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if c.code != "" && r.json["code"] != c.code {
				t.Errorf("code %v, want %s: %s", r.json["code"], c.code, r.body)
			}
			for path, want := range c.want {
				if got := ingesttest.Get(r.json, path); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s = %v, want %v", path, got, want)
				}
			}
			switch r.status {
			case 401:
				if r.header.Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
			case 405:
				if r.header.Get("Allow") == "" {
					t.Error("405 without Allow")
				}
			}
			if c.golden != "" {
				checkGolden(t, c.golden, r)
			}
		})
	}
}

var volatile = regexp.MustCompile(`"(request_id|duration_ms)":("req_[0-9A-Z]+"|[0-9]+)|"snapshot":\{[^}]*\}`)

// blank replaces a volatile member's value with "…" (the whole of
// meta.snapshot, whose build id and time change with every build).
func blank(m []byte) []byte {
	if bytes.HasPrefix(m, []byte(`"snapshot"`)) {
		return []byte(`"snapshot":"…"`)
	}
	name, _, _ := bytes.Cut(m[1:], []byte(`"`))
	return append(append([]byte(`"`), name...), `":"…"`...)
}

// checkGolden compares a response with testdata/golden/<name>.json, with the
// request id and duration blanked.
func checkGolden(t *testing.T, name string, r response) {
	t.Helper()
	body := volatile.ReplaceAllFunc(r.body, blank)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("HTTP %d\n%s\n", r.status, pretty.String())
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(want) != got {
		t.Errorf("response differs from %s (go test -update to accept):\n%s", path, got)
	}
}
