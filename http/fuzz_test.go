package http_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/internal/fuzzseed"
)

// FuzzREST sends arbitrary paths, query strings and bodies through the real
// REST handler (in process) over a real snapshot: every answer is a 200
// envelope or a problem+json with a known code, never a 500, never a panic.
//
//	go test -run '^$' -fuzz '^FuzzREST$' -fuzztime 10m ./http/
func FuzzREST(f *testing.F) {
	snap := ingesttest.Build(f, ingesttest.SearchInput(f, 40))
	svc, secrets := ingesttest.Service(f, snap)
	h := pdshttp.New(svc, ingesttest.Logger(f), nil)
	known := map[string]bool{}
	for _, c := range domain.Codes() {
		known[c] = true
	}
	seeds := []struct {
		post              bool
		path, query, body string
	}{
		{false, "/v1/products/09520123456788", "", ""},
		{false, "/v1/products/internal_sku:P-0001/dpp", "", ""},
		{false, "/v1/products/P-0002/evidence", "", ""},
		{false, "/v1/products/search", "manufacturer=acme%20fods&limit=3", ""},
		{false, "/v1/products/search", "sort=updated_at&cursor=eyJxIjoiIn0", ""},
		{false, "/v1/products/search", "trust_level_min=L2&has_passport=true&updated_since=2025-01-01T00:00:00Z", ""},
		{false, "/v1/sources/33333333-0000-4000-8000-000000000001", "", ""},
		{true, "/v1/products/resolve", "", `{"identifiers":["09520123456788","x","9520123456788"]}`},
		{true, "/v1/identifiers/validate", "", `{"value":"9520123456788","namespace":"auto"}`},
		{true, "/v1/digital-links/resolve", "", `{"uri":"https://id.gs1.org/01/09520123456788/10/AB?17=261231"}`},
		{false, "/v1/whoami", "", ""},
		{false, "/v1/products/%ff%00", "", ""},
	}
	var all [][]any
	for _, s := range seeds {
		all = append(all, []any{s.post, s.path, s.query, s.body})
	}
	fuzzseed.Seed(f, all...)
	f.Fuzz(func(t *testing.T, post bool, path, query, body string) {
		method := http.MethodGet
		if post {
			method = http.MethodPost
		}
		req := &http.Request{Method: method, URL: &url.URL{Path: path, RawQuery: query}, Header: http.Header{},
			Body: http.NoBody, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Host: "pds.test"}
		if body != "" {
			req.Body = httpBody(body)
			req.ContentLength = int64(len(body))
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+secrets[ingesttest.KeyFull])
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s?%s %q: %d %s", method, path, query, body, rec.Code, rec.Body.Bytes())
		}
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatalf("%s %s?%s: body is not JSON: %v %q", method, path, query, err, rec.Body.Bytes())
		}
		if rec.Code != 200 {
			code, _ := m["code"].(string)
			if !known[code] || rec.Header().Get("Content-Type") != "application/problem+json" {
				t.Fatalf("%s %s?%s: %d with code %q", method, path, query, rec.Code, code)
			}
		}
	})
}

func httpBody(s string) *bodyReader { return &bodyReader{strings.NewReader(s)} }

type bodyReader struct{ *strings.Reader }

func (bodyReader) Close() error { return nil }
