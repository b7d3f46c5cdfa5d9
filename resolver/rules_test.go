package resolver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"mime"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/http/httpfront"
	"github.com/productdata/pds/resolver"
	"github.com/productdata/pds/service/quota"
)

// The tests below hold the GS1-Conformant resolver rules docs/resolver.md
// lists, one test (or more) per rule, named for the rule.

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func newMeter(t *testing.T) *quota.Meter {
	t.Helper()
	m, err := quota.Open(filepath.Join(t.TempDir(), "usage"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// serve starts h alone on a loopback listener of the real server.
func serve(t *testing.T, h *resolver.Handler) string {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	ln := &httpfront.Listener{Addr: "127.0.0.1:0", Handler: pdshttp.NewWithOptions(svc, log, nil, pdshttp.Options{Resolver: h, ResolverOnly: true}),
		Limits: httpfront.DefaultLimits, Log: log}
	if err := ln.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close(context.Background()) })
	return ln.URL()
}

// linksetOf fetches and checks a linkset, and returns it decoded.
func linksetOf(t *testing.T, url string, header ...string) (map[string]any, string) {
	t.Helper()
	res, body := get(t, "GET", url, header...)
	if res.StatusCode != 200 {
		t.Fatalf("%s: %d %s", url, res.StatusCode, body)
	}
	if err := checkLinkset([]byte(body)); err != nil {
		t.Fatalf("%s: not an RFC 9264 linkset: %v\n%s", url, err, body)
	}
	var ls map[string]any
	json.Unmarshal([]byte(body), &ls)
	return ls["linkset"].([]any)[0].(map[string]any), res.Header.Get("Content-Type")
}

// checkLinkset holds a document to the JSON shape of RFC 9264 section 4.2:
// an object with the one member "linkset", an array of link context
// objects; each has an optional "anchor" (a URI) and link relation types
// (a registered name or an absolute URI) whose values are non-empty arrays
// of target objects; a target has "href" (a URI reference), "type",
// "title" and "media" as strings, "hreflang" as an array of language tags,
// "title*" as an array of {value, language}, and any other attribute as an
// array.
func checkLinkset(doc []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if len(top) != 1 || top["linkset"] == nil {
		return fmt.Errorf("the object must hold only linkset")
	}
	var contexts []map[string]json.RawMessage
	if err := json.Unmarshal(top["linkset"], &contexts); err != nil {
		return fmt.Errorf("linkset is not an array of objects: %v", err)
	}
	registered := regexp.MustCompile(`^[a-z][a-z0-9.\-]*$`)
	langTag := regexp.MustCompile(`^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$`)
	for i, c := range contexts {
		for name, v := range c {
			if name == "anchor" {
				var a string
				if err := json.Unmarshal(v, &a); err != nil {
					return fmt.Errorf("context %d: anchor is not a string", i)
				}
				if u, err := url.Parse(a); err != nil || !u.IsAbs() {
					return fmt.Errorf("context %d: anchor %q is not an absolute URI", i, a)
				}
				continue
			}
			if u, err := url.Parse(name); !registered.MatchString(name) && (err != nil || !u.IsAbs()) {
				return fmt.Errorf("context %d: %q is neither a registered relation type nor a URI", i, name)
			}
			var targets []map[string]json.RawMessage
			if err := json.Unmarshal(v, &targets); err != nil || len(targets) == 0 {
				return fmt.Errorf("context %d: %s is not a non-empty array of target objects", i, name)
			}
			for j, tg := range targets {
				var href string
				if err := json.Unmarshal(tg["href"], &href); err != nil || href == "" {
					return fmt.Errorf("%s target %d has no href", name, j)
				}
				if _, err := url.Parse(href); err != nil {
					return fmt.Errorf("%s target %d: href %q is not a URI reference", name, j, href)
				}
				for attr, av := range tg {
					switch attr {
					case "href":
					case "type", "title", "media":
						var s string
						if json.Unmarshal(av, &s) != nil {
							return fmt.Errorf("%s target %d: %s is not a string", name, j, attr)
						}
					case "hreflang":
						var tags []string
						if json.Unmarshal(av, &tags) != nil {
							return fmt.Errorf("%s target %d: hreflang is not an array of strings", name, j)
						}
						for _, tag := range tags {
							if !langTag.MatchString(tag) {
								return fmt.Errorf("%s target %d: %q is not a language tag", name, j, tag)
							}
						}
					case "title*":
						var ts []struct {
							Value    *string `json:"value"`
							Language string  `json:"language"`
						}
						if json.Unmarshal(av, &ts) != nil {
							return fmt.Errorf("%s target %d: title* is not an array of objects", name, j)
						}
						for _, x := range ts {
							if x.Value == nil {
								return fmt.Errorf("%s target %d: a title* has no value", name, j)
							}
						}
					default:
						var ext []json.RawMessage
						if json.Unmarshal(av, &ext) != nil {
							return fmt.Errorf("%s target %d: extension attribute %s is not an array", name, j, attr)
						}
					}
				}
			}
		}
	}
	return nil
}

// The checker refuses what RFC 9264 does not allow, so that its passes
// mean something.
func TestLinksetCheckerRefusesBadShapes(t *testing.T) {
	for _, bad := range []string{
		`[]`, `{"links":[]}`, `{"linkset":{}}`, `{"linkset":[{"anchor":"relative/x"}]}`,
		`{"linkset":[{"https://ref.gs1.org/voc/pip":[]}]}`, `{"linkset":[{"pip x":[{"href":"/a"}]}]}`,
		`{"linkset":[{"item":[{"title":"no href"}]}]}`, `{"linkset":[{"item":[{"href":"/a","hreflang":"en"}]}]}`,
		`{"linkset":[{"item":[{"href":"/a","custom":"not an array"}]}]}`, `{"linkset":[{"item":{"href":"/a"}}]}`,
	} {
		if checkLinkset([]byte(bad)) == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	if err := checkLinkset([]byte(`{"linkset":[{"anchor":"https://x.example/01/1","item":[{"href":"/a","hreflang":["en","de-CH"],"title*":[{"value":"x","language":"en"}],"custom":["y"]}]}]}`)); err != nil {
		t.Errorf("refused a good linkset: %v", err)
	}
}

// Rule: SHALL support HTTP 1.1 GET, HEAD and OPTIONS.
func TestRuleGetHeadOptions(t *testing.T) {
	u := base + "/01/" + showcase
	getRes, _ := get(t, "GET", u)
	headRes, body := get(t, "HEAD", u)
	if headRes.StatusCode != getRes.StatusCode || headRes.Header.Get("Location") != getRes.Header.Get("Location") || body != "" {
		t.Errorf("HEAD %d %q, GET %d", headRes.StatusCode, body, getRes.StatusCode)
	}
	res, _ := get(t, "OPTIONS", u, "Origin", "https://shop.example", "Access-Control-Request-Method", "GET")
	if res.StatusCode != 204 || !strings.Contains(res.Header.Get("Allow"), "HEAD") || !strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "OPTIONS") {
		t.Errorf("OPTIONS %d %v", res.StatusCode, res.Header)
	}
	if res, body := get(t, "POST", u); res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Errorf("POST %d %s", res.StatusCode, body)
	}
}

// Rule: SHALL support HTTP over TLS. pds serves plain HTTP; behind a TLS
// proxy it trusts, its links say https.
func TestRuleHTTPSBehindATrustedProxy(t *testing.T) {
	srv := serve(t, resolver.New(svc, resolver.Options{TrustedProxies: loopback}))
	ls, _ := linksetOf(t, srv+"/01/"+showcase+"?linkType=linkset", "X-Forwarded-Proto", "https", "Host", "id.example.com")
	if ls["anchor"] != "https://id.example.com/01/"+showcase {
		t.Errorf("anchor %v", ls["anchor"])
	}
	srv = serve(t, resolver.New(svc, resolver.Options{Root: "https://id.example.com"}))
	ls, _ = linksetOf(t, srv+"/01/"+showcase+"?linkType=linkset")
	if ls["anchor"] != "https://id.example.com/01/"+showcase {
		t.Errorf("with Root: anchor %v", ls["anchor"])
	}
	// An untrusted peer's X-Forwarded-Proto is not believed.
	ls, _ = linksetOf(t, base+"/01/"+showcase+"?linkType=linkset", "X-Forwarded-Proto", "https")
	if !strings.HasPrefix(ls["anchor"].(string), "http://127.0.0.1:") {
		t.Errorf("untrusted X-Forwarded-Proto believed: %v", ls["anchor"])
	}
}

// Rule: SHALL support CORS.
func TestRuleCORS(t *testing.T) {
	for _, path := range []string{"/01/" + showcase, "/01/" + showcase + "?linkType=linkset", "/.well-known/gs1resolver", "/01/" + notFound, "/01/x"} {
		res, _ := get(t, "GET", base+path, "Origin", "https://shop.example")
		if res.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "Link") {
			t.Errorf("%s: %v", path, res.Header)
		}
	}
}

// Rule: SHALL decompress a compressed URI. Not met: pds reads uncompressed
// URIs only and says so with 400 UNSUPPORTED_URI_FORM.
func TestRuleCompressedURIsRefused(t *testing.T) {
	res, body := get(t, "GET", base+"/AQnYUc1gGRBIEQ", "Accept", "application/json")
	if res.StatusCode != 400 || !strings.Contains(body, `"code":"UNSUPPORTED_URI_FORM"`) || !strings.Contains(body, "compressed") {
		t.Errorf("%d %s", res.StatusCode, body)
	}
}

// Rule: SHALL validate the URI syntax and report errors with 400 (a page
// for a browser, problem+json for a program); SHALL NOT answer 200 for an
// error.
func TestRuleSyntaxErrorsAre400(t *testing.T) {
	for _, path := range []string{"/01/" + showcase + "/foo", "/01/09520123456789", "/01/" + showcase + "/21/A/10/B", "/", "/favicon.ico", "/x/01/" + showcase, "/passport/01/123"} {
		res, body := get(t, "GET", base+path, "Accept", "text/html")
		if res.StatusCode != 400 || !strings.Contains(body, "Error <span class=\"mono\">") {
			t.Errorf("%s as HTML: %d", path, res.StatusCode)
		}
		res, body = get(t, "GET", base+path, "Accept", "application/json")
		var p struct {
			Status int    `json:"status"`
			Code   string `json:"code"`
		}
		if json.Unmarshal([]byte(body), &p); res.StatusCode != 400 || p.Status != 400 || p.Code == "" || res.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s as JSON: %d %s", path, res.StatusCode, body)
		}
		if v := res.Header.Get("X-Content-Type-Options"); v != "nosniff" {
			t.Errorf("%s as JSON: X-Content-Type-Options %q, want nosniff", path, v)
		}
	}
}

// Rule: SHALL answer linkType=linkset (and all, and Accept:
// application/linkset+json) with the links as an RFC 9264 linkset, whose
// subject is the uncompressed URI; with key qualifiers, the links of each
// level up to the primary key are included.
func TestRuleLinkset(t *testing.T) {
	for _, tc := range []struct{ query, accept, ct string }{
		{"?linkType=linkset", "", "application/linkset+json"},
		{"?linkType=all", "application/json", "application/json"},
		{"", "application/linkset+json", "application/linkset+json"},
	} {
		ls, ct := linksetOf(t, base+"/01/"+showcase+tc.query, "Accept", tc.accept)
		if ct != tc.ct || ls["anchor"] != base+"/01/"+showcase {
			t.Errorf("%+v: %s %v", tc, ct, ls["anchor"])
		}
	}
	ls, _ := linksetOf(t, base+"/01/"+showcase+"/10/LOT%2F7/21/S1?linkType=linkset")
	if ls["anchor"] != base+"/01/"+showcase+"/10/LOT%2F7/21/S1" {
		t.Errorf("anchor with qualifiers %v", ls["anchor"])
	}
	for _, rel := range []string{"https://ref.gs1.org/voc/pip", "https://ref.gs1.org/voc/masterData", "describedby"} {
		if ls[rel] == nil {
			t.Errorf("the product-level link %s is missing under the qualified URI", rel)
		}
	}
	if href := ls["https://ref.gs1.org/voc/pip"].([]any)[0].(map[string]any)["href"]; href != base+"/passport/01/"+showcase+"/10/LOT%2F7/21/S1" {
		t.Errorf("page of the qualified URI %v", href)
	}
}

// Rule: SHOULD expose the linkset in a Link header, even when redirecting;
// SHOULD point to a JSON-LD context.
func TestRuleLinkHeaders(t *testing.T) {
	want := "<" + base + "/01/" + showcase + "?linkType=linkset>; rel=\"linkset\""
	for _, q := range []string{"", "?linkType=gs1:pip", "?linkType=linkset"} {
		res, _ := get(t, "GET", base+"/01/"+showcase+q)
		if !strings.Contains(strings.Join(res.Header.Values("Link"), ", "), want) {
			t.Errorf("%q: Link %v", q, res.Header.Values("Link"))
		}
	}
	res, _ := get(t, "GET", base+"/01/"+showcase+"?linkType=linkset")
	if !strings.Contains(strings.Join(res.Header.Values("Link"), ", "), `rel="http://www.w3.org/ns/json-ld#context"`) {
		t.Errorf("no JSON-LD context: %v", res.Header.Values("Link"))
	}
}

// Rule: SHALL recognise one link as the default (with no optional
// attributes), also described by a descriptive link type.
func TestRuleOneDefaultLink(t *testing.T) {
	ls, _ := linksetOf(t, base+"/01/"+showcase+"?linkType=linkset")
	def := ls["https://ref.gs1.org/voc/defaultLink"].([]any)
	if len(def) != 1 {
		t.Fatalf("%d default links", len(def))
	}
	d := def[0].(map[string]any)
	if len(d) != 2 || d["href"] == nil || d["title"] == nil {
		t.Errorf("the default link has more than href and title: %v", d)
	}
	found := false
	for _, t := range ls["https://ref.gs1.org/voc/pip"].([]any) {
		found = found || t.(map[string]any)["href"] == d["href"]
	}
	if !found {
		t.Errorf("the default link is not also a gs1:pip")
	}
}

// Rule: every link SHALL have a target URL, a link type and a title, and
// SHOULD give its language (pds's pages do; the language of a source's
// document is not known); a media type given SHALL be a registered one.
func TestRuleLinksAreComplete(t *testing.T) {
	ls, _ := linksetOf(t, base+"/01/"+showcase+"?linkType=linkset")
	n := 0
	for rel, v := range ls {
		if rel == "anchor" {
			continue
		}
		for _, x := range v.([]any) {
			tg := x.(map[string]any)
			n++
			if tg["href"] == "" || tg["title"] == "" || tg["title"] == nil {
				t.Errorf("%s: %v", rel, tg)
			}
			if typ, ok := tg["type"].(string); ok {
				if _, _, err := mime.ParseMediaType(typ); err != nil {
					t.Errorf("%s: media type %q: %v", rel, typ, err)
				}
				if typ == "text/html" && strings.HasPrefix(tg["href"].(string), base) && tg["hreflang"] == nil {
					t.Errorf("%s: pds's page without hreflang", rel)
				}
			}
		}
	}
	if n < 8 {
		t.Errorf("only %d links", n)
	}
}

// Rule: SHALL redirect to the default link unless the request says better
// (here: a browser and curl go to the passport page; a linkset client gets
// the linkset).
func TestRuleRedirectToDefault(t *testing.T) {
	for _, accept := range []string{"", "*/*", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"} {
		res, _ := get(t, "GET", base+"/01/"+showcase, "Accept", accept)
		if res.StatusCode != 307 || res.Header.Get("Location") != base+"/passport/01/"+showcase {
			t.Errorf("Accept %q: %d %s", accept, res.StatusCode, res.Header.Get("Location"))
		}
	}
}

// Rule: SHALL redirect to the link type asked for when there is one, and
// answer 404 when there is none; gs1:x and the vocabulary's URIs name the
// same type; among links of one type the Accept header chooses.
func TestRuleRedirectToLinkType(t *testing.T) {
	for _, tc := range []struct{ linkType, accept, want string }{
		{"gs1:pip", "", base + "/passport/01/" + showcase},
		{url.QueryEscape("https://gs1.org/voc/pip"), "", base + "/passport/01/" + showcase},
		{url.QueryEscape("https://ref.gs1.org/voc/masterData"), "", base + "/v1/products/gtin:" + showcase},
		{"gs1:productPassport", "application/json", base + "/v1/products/gtin:" + showcase + "/dpp"},
		{"gs1:productPassport", "text/html", base + "/passport/01/" + showcase},
		{"describedby", "application/pdf", "https://api.ecometrics.example/reports/" + showcase + ".pdf"},
	} {
		res, _ := get(t, "GET", base+"/01/"+showcase+"?linkType="+tc.linkType, "Accept", tc.accept)
		loc, _, _ := strings.Cut(res.Header.Get("Location"), "?")
		if res.StatusCode != 307 || loc != tc.want {
			t.Errorf("%+v: %d %s", tc, res.StatusCode, res.Header.Get("Location"))
		}
	}
	res, body := get(t, "GET", base+"/01/"+showcase+"?linkType=gs1:recallStatus", "Accept", "text/html")
	if res.StatusCode != 404 || !strings.Contains(body, "No gs1:recallStatus link") || !strings.Contains(body, "gs1:pip") {
		t.Errorf("missing link type: %d", res.StatusCode)
	}
	res, body = get(t, "GET", base+"/01/"+showcase+"?linkType=gs1:recallStatus", "Accept", "application/linkset+json")
	if res.StatusCode != 404 || checkLinkset([]byte(body)) != nil {
		t.Errorf("missing link type as a linkset: %d %s", res.StatusCode, body)
	}
}

// Rule: SHALL pass on the query string when redirecting.
func TestRuleQueryPassedOn(t *testing.T) {
	res, _ := get(t, "GET", base+"/01/"+showcase+"?foo=bar&17=261231")
	if res.Header.Get("Location") != base+"/passport/01/"+showcase+"?foo=bar&17=261231" {
		t.Errorf("Location %s", res.Header.Get("Location"))
	}
	res, _ = get(t, "GET", base+"/01/"+showcase+"?linkType=describedby&foo=bar", "Accept", "application/pdf")
	if !strings.HasSuffix(res.Header.Get("Location"), ".pdf?linkType=describedby&foo=bar") {
		t.Errorf("Location %s", res.Header.Get("Location"))
	}
}

// Rule: SHALL provide /.well-known/gs1resolver with the primary keys it
// supports.
func TestRuleDescriptionFile(t *testing.T) {
	res, body := get(t, "GET", base+"/.well-known/gs1resolver")
	var d struct {
		Name                 string   `json:"name"`
		ResolverRoot         string   `json:"resolverRoot"`
		SupportedPrimaryKeys []string `json:"supportedPrimaryKeys"`
		SupportedLinkType    []struct {
			Namespace, Prefix string
		} `json:"supportedLinkType"`
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil || res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	if d.ResolverRoot != base || len(d.SupportedPrimaryKeys) != 1 || d.SupportedPrimaryKeys[0] != "01" || d.Name == "" ||
		len(d.SupportedLinkType) != 1 || d.SupportedLinkType[0].Namespace != "https://ref.gs1.org/voc/" || d.SupportedLinkType[0].Prefix != "gs1:" {
		t.Errorf("%+v", d)
	}
}

// Rule: SHALL recognise the GS1 Web vocabulary; link types from elsewhere
// SHALL NOT duplicate GS1's (pds uses IANA's describedby for evidence
// documents only); no gs1:handledBy, since pds redirects no prefix
// wholesale.
func TestRuleLinkTypesFromTheGS1Vocabulary(t *testing.T) {
	ls, _ := linksetOf(t, base+"/01/"+showcase+"?linkType=linkset")
	for rel := range ls {
		if rel != "anchor" && rel != "describedby" && !strings.HasPrefix(rel, "https://ref.gs1.org/voc/") {
			t.Errorf("link type %s", rel)
		}
		if strings.HasSuffix(rel, "handledBy") {
			t.Errorf("handledBy in a linkset")
		}
	}
}

// Rule: SHOULD tolerate a trailing slash.
func TestRuleTrailingSlash(t *testing.T) {
	a, _ := get(t, "GET", base+"/01/"+showcase)
	b, _ := get(t, "GET", base+"/01/"+showcase+"/")
	if a.StatusCode != b.StatusCode || a.Header.Get("Location") != b.Header.Get("Location") {
		t.Errorf("%d %s, with the slash %d %s", a.StatusCode, a.Header.Get("Location"), b.StatusCode, b.Header.Get("Location"))
	}
}

// Rule: SHOULD use Accept-Language (and context) to choose among links.
// Not met: pds has one link per type and media type, in English; the
// header changes nothing.
func TestRuleAcceptLanguageIgnored(t *testing.T) {
	a, _ := get(t, "GET", base+"/01/"+showcase+"?linkType=gs1:pip")
	b, _ := get(t, "GET", base+"/01/"+showcase+"?linkType=gs1:pip&context=SE", "Accept-Language", "sv")
	la, _, _ := strings.Cut(a.Header.Get("Location"), "?")
	lb, _, _ := strings.Cut(b.Header.Get("Location"), "?")
	if a.StatusCode != 307 || la != lb {
		t.Errorf("%s vs %s", la, lb)
	}
}

// Rule: every primary key (with its key qualifiers) SHALL be supported: each
// key the gs1 package parses is answered, a GTIN with each qualifier
// sequence resolves to its product, and the old convenience names are read.
func TestRuleEveryPrimaryKeyAnswered(t *testing.T) {
	keys := map[string]string{
		"00": "095201234567891235", "01": showcase, "253": "9520123456788DOC-1", "255": "9520123456788123", "401": "9520123ABC",
		"402": "95201234567890122", "414": "9520123456788", "415": "9520123456788", "417": "9520123456788", "8003": "09520123456788ASSET1",
		"8004": "9520123ABC", "8006": showcase + "0102", "8010": "9520123-AB", "8013": "1987654Ad4X4bL5ttr2310c2K",
		"8017": "952012345678901233", "8018": "952012345678901233",
	}
	for ai, v := range keys {
		res, _ := get(t, "GET", base+"/"+ai+"/"+v)
		want := 404
		if ai == "01" {
			want = 307
		}
		if res.StatusCode != want {
			t.Errorf("/%s/%s: %d", ai, v, res.StatusCode)
		}
	}
	for _, path := range []string{"/22/2A/10/ABC/21/S1", "/10/L1", "/21/S1", "/235/TPX1", "/22/2A/21/S1"} {
		res, _ := get(t, "GET", base+"/01/"+showcase+path)
		if res.StatusCode != 307 || res.Header.Get("Location") != base+"/passport/01/"+showcase+path {
			t.Errorf("%s: %d %s", path, res.StatusCode, res.Header.Get("Location"))
		}
	}
	for _, path := range []string{"/gtin/" + showcase, "/GTIN/" + showcase, "/01/9520123456788"} {
		res, _ := get(t, "GET", base+path)
		if res.StatusCode != 307 || res.Header.Get("Location") != base+"/passport/01/"+showcase {
			t.Errorf("%s: %d %s", path, res.StatusCode, res.Header.Get("Location"))
		}
	}
	res, _ := get(t, "GET", base+"/gtin/"+showcase+"/lot/L1")
	if res.Header.Get("Location") != base+"/passport/01/"+showcase+"/10/L1" {
		t.Errorf("/gtin/…/lot/…: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	_, body := get(t, "GET", base+"/passport/gtin/"+showcase+"/lot/L1")
	mustContain(t, "page of a convenience path", body, "old convenience names", "BATCH/LOT (AI 10)", "pds holds data per product")
}
