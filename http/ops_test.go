package http_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/productdata/pds/domain"
	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/http/httpfront"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/internal/metrics"
)

func opsServer(t *testing.T, o pdshttp.Options) (*pdshttp.Server, string, map[string]string) {
	t.Helper()
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	svc, secrets := ingesttest.Service(t, snap)
	h := pdshttp.NewWithOptions(svc, ingesttest.Logger(t), nil, o)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv.URL, secrets
}

func send(t *testing.T, method, url, key, ctype, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	status, header, _, decoded := ingesttest.Send(t, req)
	return status, header, decoded
}

// Failure 8: HEAD is GET without a body, OPTIONS is 204 with Allow, a key
// without the scope hears 403 before any complaint about its body, and Allow
// lists only what works (ingesttest.Send checks Allow against the document).
func TestMethodsAndScopeFirst(t *testing.T) {
	_, url, keys := opsServer(t, pdshttp.Options{})
	full, ro := keys[ingesttest.KeyFull], keys[ingesttest.KeyReadOnly]
	cases := []struct {
		name, method, path, key, ctype, body string
		status                               int
		code                                 string
	}{
		{"HEAD product", "HEAD", "/v1/products/09520123456788", full, "", "", 200, ""},
		{"HEAD whoami no key", "HEAD", "/v1/whoami", "", "", "", 401, ""},
		{"OPTIONS product", "OPTIONS", "/v1/products/09520123456788", "", "", "", 204, ""},
		{"OPTIONS resolve", "OPTIONS", "/v1/products/resolve", "", "", "", 204, ""},
		{"OPTIONS validate", "OPTIONS", "/v1/identifiers/validate", "", "", "", 204, ""},
		{"DELETE product", "DELETE", "/v1/products/09520123456788", full, "", "", 405, domain.CodeMethodNotAllowed},
		{"PUT resolve", "PUT", "/v1/products/resolve", full, "", "", 405, domain.CodeMethodNotAllowed},
		{"bad body, no scope", "POST", "/v1/products/resolve", ro, "application/json", "{not json", 403, domain.CodeForbidden},
		{"wrong media type, no scope", "POST", "/v1/identifiers/validate", ro, "text/plain", "x", 403, domain.CodeForbidden},
		{"bad body, scope", "POST", "/v1/products/resolve", full, "application/json", "{not json", 400, domain.CodeInvalidRequest},
		{"search needs products:search", "GET", "/v1/products/search?manufacturer=x", ro, "", "", 403, domain.CodeForbidden},
		{"openapi needs no key", "GET", "/v1/openapi.json", "", "", "", 200, ""},
		{"openapi with a key", "GET", "/v1/openapi.json", ro, "", "", 200, ""},
		{"openapi with a bad key", "GET", "/v1/openapi.json", "not-a-key", "", "", 200, ""},
		{"livez", "GET", "/livez", "", "", "", 200, ""},
		{"healthz", "GET", "/healthz", "", "", "", 200, ""},
		{"readyz", "GET", "/readyz", "", "", "", 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, header, body := send(t, c.method, url+c.path, c.key, c.ctype, c.body)
			if status != c.status {
				t.Fatalf("status %d, want %d: %v", status, c.status, body)
			}
			if c.code != "" && body["code"] != c.code {
				t.Fatalf("code %v, want %s", body["code"], c.code)
			}
			if c.method == "OPTIONS" && header.Get("Allow") == "" {
				t.Fatalf("no Allow")
			}
		})
	}
	// The YAML form is the embedded document, served without a key as
	// OpenAPI tooling fetches it.
	req, _ := http.NewRequest("GET", url+"/v1/openapi.yaml", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(string(b), "openapi: 3.1") {
		t.Fatalf("openapi.yaml: %d %.40q", res.StatusCode, b)
	}
}

// Readiness follows the server's state: 503 while starting and draining.
func TestReadiness(t *testing.T) {
	h, url, _ := opsServer(t, pdshttp.Options{})
	for _, c := range []struct {
		state  pdshttp.State
		status int
		word   string
	}{
		{pdshttp.Starting, 503, "starting"},
		{pdshttp.Ready, 200, "ok"},
		{pdshttp.Draining, 503, "draining"},
	} {
		h.SetState(c.state)
		status, _, body := send(t, "GET", url+"/readyz", "", "", "")
		if status != c.status || body["status"] != c.word || body["version"] == "" {
			t.Errorf("state %d: %d %v", c.state, status, body)
		}
		if status, _, _ := send(t, "GET", url+"/livez", "", "", ""); status != 200 {
			t.Errorf("livez %d in state %d", status, c.state)
		}
	}
}

// Requests past MaxInFlight are refused with 503 and Retry-After at once,
// never queued.
func TestOverloadSheds(t *testing.T) {
	_, url, keys := opsServer(t, pdshttp.Options{MaxInFlight: 1})
	const n = 64
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int]int{}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, header, body := send(t, "POST", url+"/v1/products/resolve", keys[ingesttest.KeyFull], "application/json",
				`{"identifiers":["09520123456788","gtin:09520123456788","4006381333931"]}`)
			if status == 503 && (header.Get("Retry-After") == "" || body["code"] != domain.CodeServiceUnavailable) {
				t.Errorf("503 without Retry-After or code: %v %v", header, body)
			}
			mu.Lock()
			seen[status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if seen[200] == 0 || seen[200]+seen[503] != n {
		t.Fatalf("statuses %v", seen)
	}
}

// After traffic, the metrics name the route pattern, never the raw path.
func TestMetricsAfterTraffic(t *testing.T) {
	m := metrics.New(nil)
	_, url, keys := opsServer(t, pdshttp.Options{Metrics: m})
	send(t, "GET", url+"/v1/products/09520123456788", keys[ingesttest.KeyFull], "", "")
	send(t, "GET", url+"/v1/nope", "", "", "")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	out := rec.Body.String()
	for _, want := range []string{
		`pds_http_requests_total{code="200",method="GET",route="/v1/products/:identifier"} 1`,
		`pds_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`pds_http_request_duration_seconds_count{route="/v1/products/:identifier"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q", want)
		}
	}
	if strings.Contains(out, "09520123456788") {
		t.Errorf("a raw path is in the metrics")
	}
}

// The router's routes and the document's paths match both ways.
func TestRoutesMatchDocument(t *testing.T) {
	api, err := ingesttest.API()
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	for path, item := range api.Doc.Paths.Map() {
		for m := range item.Operations() {
			doc = append(doc, m+" "+path)
		}
	}
	sort.Strings(doc)
	want := strings.Join(doc, "\n")
	h := pdshttp.New(nil, ingesttest.Logger(t), http.NotFoundHandler())
	got := strings.Join(h.Routes(), "\n")
	if got != want {
		t.Fatalf("router:\n%s\n\ndocument:\n%s", got, want)
	}
}

// abortingWriter panics on the first header or body it is given, as a
// writer whose connection is gone may: the panic leaves the router's own
// recover by the second write, of the problem its panic handler answers.
type abortingWriter struct{ http.ResponseWriter }

func (abortingWriter) WriteHeader(int)             { panic(http.ErrAbortHandler) }
func (abortingWriter) Write(b []byte) (int, error) { panic(http.ErrAbortHandler) }

// A panic that leaves the REST handler gives back its in-flight slot: with
// room for one request, the next one is answered, and the gauge is back at
// zero.
func TestPanicOutsideRouterFreesItsSlot(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	svc, _ := ingesttest.Service(t, snap)
	m := metrics.New(nil)
	rest := pdshttp.NewWithOptions(svc, ingesttest.Logger(t), nil, pdshttp.Options{MaxInFlight: 1, Metrics: m})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/abort" {
			w = abortingWriter{w}
		}
		rest.ServeHTTP(w, r)
	})
	l := &httpfront.Listener{Addr: "127.0.0.1:0", Handler: handler, Metrics: m, Limits: httpfront.DefaultLimits, Log: ingesttest.Logger(t)}
	if err := l.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	for i := 0; i < 3; i++ {
		if res, err := http.Get(l.URL() + "/v1/abort"); err == nil {
			res.Body.Close()
			t.Fatalf("an aborted answer came through: %d", res.StatusCode)
		}
	}
	status, _, body := send(t, "GET", l.URL()+"/livez", "", "", "")
	if status != http.StatusOK {
		t.Fatalf("after aborted requests: %d %v", status, body)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := "pds_http_requests_in_flight 0\n"; !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("no %q in the metrics", want)
	}
}

// Every problem tells a browser not to guess its type: the answer is JSON
// whatever its detail quotes of the request.
func TestProblemsAreNotSniffed(t *testing.T) {
	_, url, keys := opsServer(t, pdshttp.Options{})
	for _, c := range []struct {
		name, method, path, key string
		status                  int
	}{
		{"no route", "GET", "/v1/<script>alert(1)</script>", "", 404},
		{"no key", "GET", "/v1/whoami", "", 401},
		{"method", "DELETE", "/v1/products/09520123456788", keys[ingesttest.KeyFull], 405},
		{"bad identifier", "GET", "/v1/products/gtin:1", keys[ingesttest.KeyFull], 400},
	} {
		status, header, body := send(t, c.method, url+c.path, c.key, "", "")
		if status != c.status || header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s: %d %s %v", c.name, status, header.Get("Content-Type"), body)
		}
		if v := header.Get("X-Content-Type-Options"); v != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q, want nosniff", c.name, v)
		}
	}
}
