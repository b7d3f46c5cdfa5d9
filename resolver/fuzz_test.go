package resolver_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/productdata/pds/resolver"
)

// FuzzResolve holds that no request path, query or Accept header makes the
// resolver panic or answer 5xx, and that every answer is a redirect, a page,
// a linkset, JSON or a problem.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/01/09520123456788", "/passport/01/09520123456788/10/A%2FB", "/gtin/09520123456788/lot/x",
		"/01/09520123456795?linkType=linkset", "/.well-known/gs1resolver", "/8004/9520123ABC?17=261231", "/", "/01/%zz", "/414/9520123456788/254/1"} {
		f.Add(s, "linkType=gs1:pip&foo=bar", "text/html")
		f.Add(s, "", "application/linkset+json")
	}
	h := resolver.New(svc, resolver.Options{APILinks: true})
	f.Fuzz(func(t *testing.T, path, query, accept string) {
		u, err := url.Parse("http://id.example.com" + path)
		if err != nil || !strings.HasPrefix(u.Path, "/") {
			return
		}
		u.RawQuery = query
		req, err := http.NewRequest("GET", u.String(), nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", accept)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s?%s (Accept %q): %d %s", path, query, accept, rec.Code, rec.Body.String())
		}
		ct := rec.Header().Get("Content-Type")
		if !strings.HasPrefix(ct, "text/html") && !strings.HasPrefix(ct, "application/") {
			t.Fatalf("%s: Content-Type %q", path, ct)
		}
	})
}
