package resolver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/http/httpfront"
	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/resolver"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
	"github.com/productdata/pds/snapshots"
)

// The sample's showcase products (docs/gen.md).
const (
	showcase   = "09520123456788" // claims of every type, a withheld newer claim, tenant claims of acme-retail
	restricted = "09520123450106" // every claim withheld: LICENCE_RESTRICTED
	private    = "09520123450205" // private to acme-retail
	noPassport = "09520123450304" // identity only
	notFound   = "09520123456795" // absent, covered by the resolver source
	noSource   = "09780306406157" // absent, covered by nothing
	disabled   = "06001234567899" // absent, covered only by the disabled feed
	french     = "03008197381749" // a generated product named in French
)

var (
	snapDir string // the sample snapshot, built once
	svc     *service.Service
	base    string // the resolver on the API's listener, no rate limit
	acmeKey string // a key of tenant acme-retail, whose private data the sample holds
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "resolver-test-")
	if err != nil {
		panic(err)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		snapDir = filepath.Join(dir, "snap")
		if _, err := ingest.Run(context.Background(), ingest.Options{In: filepath.Join(ingesttest.Root(), "sample-input"), Out: snapDir, Rejects: io.Discard}); err != nil {
			fmt.Fprintln(os.Stderr, "ingest:", err)
			return 1
		}
		snap, err := service.OpenSnapshot(snapDir, snapshots.OpenOptions{CacheBytes: 8 << 20})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		keysPath := filepath.Join(dir, "keys.json")
		if acmeKey, _, err = keys.Add(keysPath, keys.New{Tenant: "acme-retail", Scopes: keys.AllScopes}, time.Now()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ks, err := keys.Load(keysPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		log := slog.New(slog.DiscardHandler)
		svc = service.New(snap, ks, nil, log)
		defer svc.Close()
		h := resolver.New(svc, resolver.Options{APILinks: true, Version: "test"})
		ln := &httpfront.Listener{Addr: "127.0.0.1:0", Handler: pdshttp.NewWithOptions(svc, log, nil, pdshttp.Options{Resolver: h}),
			Limits: httpfront.DefaultLimits, Log: log}
		if err := ln.Open(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer ln.Close(context.Background())
		base = ln.URL()
		return m.Run()
	}()
	os.Exit(code)
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// get sends a request with the headers given as name, value pairs and
// returns the answer and its whole body.
func get(t *testing.T, method, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func mustContain(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

func mustNotContain(t *testing.T, what, body string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(body, b) {
			t.Errorf("%s holds %q", what, b)
		}
	}
}

// The passport page of the showcase: identity, the four axes, claims with
// units and languages, evidence and sources with attribution, the build it
// came from; the withheld claim is not on it and the API's warning is; no
// script, nothing from another host, and small.
func TestPassportPageShowsTheShowcase(t *testing.T) {
	res, body := get(t, "GET", base+"/passport/01/"+showcase)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("status %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	build := svc.Current().Manifest.BuildID
	mustContain(t, "page", body,
		`<html lang="en">`, "Havrelys Oat Drink Barista 1 l", "Havregården Oat Works AB", "internal_sku:DEMO-OAT-1L",
		// the four axes, as four
		">Technical<", ">Business<", ">Regulatory<", ">Authority<", ">Attested<",
		// claims with their units and types
		"1 l", "59 kcal", "0.54 kg CO2e", "oats, gluten", "ESTIMATION, method lca_category_average 2.2", ">unknown<",
		// evidence: document, locator, content hash
		"doc_demo_3", "bytes 52007 to 52210", "JSON pointer /tradeItem/attributes/allergens",
		"sha256:b73d3a15e15caf77cf5d8a1f7e033efc125465c6285d2ccd772540650a5dac7b",
		// sources with their licence and attribution
		"Brand Publisher Network e.V.", "CC BY 4.0", "Data published by the brand owner through the Brand Publisher Network, CC BY 4.0.",
		"Footprint estimates © EcoMetrics Ltd, CC BY-SA 4.0.",
		// what the licence rules withheld, in the API's words
		"1 current claim(s) withheld", `A newer claim for &#34;energy_kcal_per_100ml&#34; was withheld`,
		"snapshot build <span class=\"mono\">"+build,
		`<th scope="row">`, `<th scope="col">`, `lang="en"`)
	mustNotContain(t, "page", body, "61 kcal", "clm_demo_8", "<script", "src=", "@import", "url(")
	if n := len(body); n > 30<<10 {
		t.Errorf("the showcase page is %d bytes, over 30 KiB", n)
	}
	t.Logf("showcase page: %d bytes", len(body))
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	// Every element of the page is from this host: its only URLs are links.
	for _, m := range regexp.MustCompile(`<(link|img|style|iframe|object|embed)[^>]*>`).FindAllString(body, -1) {
		if strings.Contains(m, "http") && !strings.Contains(m, base) {
			t.Errorf("an element loads from elsewhere: %s", m)
		}
	}
}

// A value in another language carries its lang; the page's own words stay
// English.
func TestPassportPageMarksLanguages(t *testing.T) {
	_, body := get(t, "GET", base+"/passport/01/"+french)
	mustContain(t, "page", body, `<h1 lang="fr">Evergreen Snacks Galettes bretonnes 60 g</h1>`, `<html lang="en">`)
}

// Tenant-private data is in the snapshot (a key of acme-retail sees it),
// and never on a page or in a linkset.
func TestTenantPrivateDataNeverShown(t *testing.T) {
	// The data is there for its tenant.
	req, _ := http.NewRequest("GET", base+"/v1/products/"+showcase+"/dpp", nil)
	req.Header.Set("Authorization", "Bearer "+acmeKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	mustContain(t, "acme-retail's passport", string(b), "ACME Barista Oat Drink 1L", "retailer_category")
	req, _ = http.NewRequest("GET", base+"/v1/products/"+private, nil)
	req.Header.Set("Authorization", "Bearer "+acmeKey)
	res, _ = http.DefaultClient.Do(req)
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	mustContain(t, "acme-retail's private product", string(b), `"status":"found"`)

	for _, path := range []string{"/passport/01/" + showcase, "/01/" + showcase + "?linkType=linkset", "/01/" + showcase} {
		_, body := get(t, "GET", base+path, "Accept", "text/html")
		mustNotContain(t, path, body, "ACME", "Acme Retail", "Retailer category", "retailer_category", "clm_demo_17", "006e1318-7b44-5436-8f1e-c96c473d4c48")
	}
	for _, path := range []string{"/passport/01/" + private, "/01/" + private} {
		res, body := get(t, "GET", base+path, "Accept", "text/html")
		if res.StatusCode != 404 {
			t.Errorf("%s: status %d", path, res.StatusCode)
		}
		mustContain(t, path, body, "not_found")
		mustNotContain(t, path, body, "ACME", "Acme", "ACME-PL-0001", "Dark Chocolate")
	}
	res, body := get(t, "GET", base+"/01/"+private, "Accept", "application/json")
	if res.StatusCode != 404 || !strings.Contains(body, `"has_product":false`) || strings.Contains(body, "ACME") {
		t.Errorf("private product as JSON: %d %s", res.StatusCode, body)
	}
}

// An absence is a 404 page that says what was looked up and what was
// consulted, in the words of the API's rules; a program gets the identity
// envelope with its coverage.
func TestAbsencePagesSayWhatWasConsulted(t *testing.T) {
	for _, tc := range []struct {
		path  string
		wants []string
	}{
		{"/01/" + notFound, []string{"gtin:" + notFound, "(not_found)", "Global Identifier Council", "standard resolver", "does not mean"}},
		{"/01/" + noSource, []string{"(unknown, NO_SOURCE)", "No source was consulted."}},
		{"/01/" + disabled, []string{"(unknown, NO_SOURCE)", "Legacy EAN Services Ltd", "disabled, so not consulted"}},
		{"/414/9520123456788", []string{"gln:9520123456788", "(unknown, OUT_OF_SCOPE)", "not a product identifier"}},
		{"/00/095201234567891235", []string{"sscc:095201234567891235", "(unknown, OUT_OF_SCOPE)"}},
		{"/8004/9520123ABC", []string{"GIAI 9520123ABC (AI 8004)", "(unknown, OUT_OF_SCOPE)", "Nothing was looked up"}},
		{"/passport/01/" + notFound, []string{"(not_found)"}},
	} {
		res, body := get(t, "GET", base+tc.path)
		if res.StatusCode != 404 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %s", tc.path, res.StatusCode, res.Header.Get("Content-Type"))
		}
		mustContain(t, tc.path, body, append(tc.wants, "What was looked up", "What was consulted")...)
	}
	res, body := get(t, "GET", base+"/01/"+notFound, "Accept", "application/linkset+json")
	var env struct {
		Status string `json:"status"`
		Meta   struct {
			Coverage struct {
				SourcesConsulted []string `json:"sources_consulted"`
			} `json:"coverage"`
		} `json:"meta"`
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil || res.StatusCode != 404 || env.Status != "not_found" || len(env.Meta.Coverage.SourcesConsulted) != 1 {
		t.Errorf("absence as JSON: %d %s", res.StatusCode, body)
	}
}

// Found products without claims to show: the identity is on the page and
// it says why there are no claims.
func TestPassportPageWithoutClaims(t *testing.T) {
	res, body := get(t, "GET", base+"/passport/01/"+restricted)
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	mustContain(t, "licence-restricted page", body, "LICENCE_RESTRICTED", "4 current claim(s) withheld", "No rule evaluated")
	mustNotContain(t, "licence-restricted page", body, "Alpenkräuter Bonbons", "Continental Syndication")
	res, body = get(t, "GET", base+"/passport/01/"+noPassport)
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	mustContain(t, "page without a passport", body, "Ångström Instruments AB", "pds holds no passport for this product")
}

// A client address is limited with the service's meter; behind a trusted
// proxy each forwarded address has its own bucket.
func TestResolverRateLimitsEachAddress(t *testing.T) {
	meter := newMeter(t)
	h := resolver.New(svc, resolver.Options{Meter: meter, Rate: 0.001, Burst: 2})
	srv := serve(t, h)
	for i := 0; i < 2; i++ {
		if res, _ := get(t, "GET", srv+"/.well-known/gs1resolver"); res.StatusCode != 200 || res.Header.Get("RateLimit-Limit") != "2" {
			t.Fatalf("call %d: %d %v", i, res.StatusCode, res.Header)
		}
	}
	res, body := get(t, "GET", srv+"/01/"+showcase, "Accept", "text/html")
	if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" || !strings.Contains(body, "this address may make") {
		t.Fatalf("third call: %d %v %s", res.StatusCode, res.Header, body)
	}
	res, body = get(t, "GET", srv+"/01/"+showcase, "Accept", "application/json")
	if res.StatusCode != 429 || !strings.Contains(body, `"code":"RATE_LIMITED"`) {
		t.Fatalf("as JSON: %d %s", res.StatusCode, body)
	}
	// X-Forwarded-For is not believed from an untrusted peer.
	if res, _ := get(t, "GET", srv+"/.well-known/gs1resolver", "X-Forwarded-For", "203.0.113.9"); res.StatusCode != 429 {
		t.Errorf("a forged X-Forwarded-For got a fresh bucket: %d", res.StatusCode)
	}
	// Behind a trusted proxy, each client has its own.
	h = resolver.New(svc, resolver.Options{Meter: newMeter(t), Rate: 0.001, Burst: 1, TrustedProxies: loopback})
	srv = serve(t, h)
	for _, client := range []string{"203.0.113.1", "203.0.113.2"} {
		if res, _ := get(t, "GET", srv+"/.well-known/gs1resolver", "X-Forwarded-For", client); res.StatusCode != 200 {
			t.Errorf("%s: %d", client, res.StatusCode)
		}
	}
	if res, _ := get(t, "GET", srv+"/.well-known/gs1resolver", "X-Forwarded-For", "203.0.113.1"); res.StatusCode != 429 {
		t.Errorf("203.0.113.1 again: %d", res.StatusCode)
	}
}
