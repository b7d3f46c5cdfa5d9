package httpwire_test

import (
	"bufio"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/http/httpwire"
)

// TestEveryCodeHasAStatus: a code without an entry would be served as 500.
func TestEveryCodeHasAStatus(t *testing.T) {
	for _, code := range domain.Codes() {
		p := httpwire.NewProblem(&domain.Error{Code: code}, "req_1")
		if p.Code != code || p.Title == "" || (p.Status == 500) != (code == domain.CodeInternal) {
			t.Errorf("%s: %+v", code, p)
		}
	}
	if p := httpwire.NewProblem(&domain.Error{Code: "NOT_A_CODE"}, ""); p.Code != domain.CodeInternal || p.Status != 500 {
		t.Errorf("unknown code: %+v", p)
	}
	if p := httpwire.NewProblem(&domain.Error{Code: domain.CodeInvalidRequest, Detail: strings.Repeat("x", 600)}, ""); len(p.Detail) != httpwire.MaxDetail {
		t.Errorf("detail of %d bytes, want %d", len(p.Detail), httpwire.MaxDetail)
	}
}

func TestSetProblemHeaders(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want map[string]string
	}{
		{"unauthenticated", domain.Errorf(domain.CodeUnauthenticated, "no key"), map[string]string{"WWW-Authenticate": `Bearer realm="pds"`}},
		{"method", httpwire.MethodNotAllowed("GET", "a product is read with GET"), map[string]string{"Allow": "GET"}},
		{"rate limited", &domain.Error{Code: domain.CodeRateLimited, RetryAfter: 7}, map[string]string{"Retry-After": "7"}},
		{"quota without a wait", &domain.Error{Code: domain.CodeTenantQuotaExceeded}, map[string]string{"Retry-After": "1"}},
		{"unavailable", &domain.Error{Code: domain.CodeServiceUnavailable, RetryAfter: 1}, map[string]string{"Retry-After": "1"}},
		{"bad request", domain.Errorf(domain.CodeInvalidFilter, "x"), map[string]string{}},
		{"internal", errors.New("boom"), map[string]string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			httpwire.SetProblemHeaders(h, c.err)
			if h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("X-Content-Type-Options %q, want nosniff", h.Get("X-Content-Type-Options"))
			}
			h.Del("X-Content-Type-Options")
			if len(h) != len(c.want) {
				t.Errorf("headers %v, want %v", h, c.want)
			}
			for k, v := range c.want {
				if h.Get(k) != v {
					t.Errorf("%s %q, want %q", k, h.Get(k), v)
				}
			}
		})
	}
	if de := domain.AsError(httpwire.MethodNotAllowed("POST", "x")); de.Code != domain.CodeMethodNotAllowed || de.Detail != "x" {
		t.Errorf("MethodNotAllowed is %+v", de)
	}
}

func TestReadBody(t *testing.T) {
	for _, c := range []struct {
		size int
		code string
	}{{0, ""}, {httpwire.MaxBody, ""}, {httpwire.MaxBody + 1, domain.CodePayloadTooLarge}} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", c.size)))
		body, err := httpwire.ReadBody(httptest.NewRecorder(), r)
		switch {
		case c.code == "" && (err != nil || len(body) != c.size):
			t.Errorf("%d bytes: %d read, %v", c.size, len(body), err)
		case c.code != "" && domain.AsError(err).Code != c.code:
			t.Errorf("%d bytes: %v, want %s", c.size, err, c.code)
		}
	}
}

// HeadSize counts a head as it came: the request line, Host and the other
// header lines with their CRLFs, and the blank line.
func TestHeadSizeIsTheHeadAsSent(t *testing.T) {
	for _, head := range []string{
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /v1/products/search?manufacturer=acme HTTP/1.1\r\nHost: pds.test:8080\r\nAuthorization: Bearer k\r\nAccept: */*\r\n\r\n",
		"POST /v1/products/resolve HTTP/1.1\r\nHost: pds.test\r\nContent-Type: application/json\r\nContent-Length: 0\r\nX-A: 1\r\nX-A: 2\r\n\r\n",
		"GET /x HTTP/1.0\r\n\r\n",
	} {
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(head)))
		if err != nil {
			t.Fatal(err)
		}
		if got := httpwire.HeadSize(r); got != len(head) {
			t.Errorf("%q: %d, want %d", head, got, len(head))
		}
	}
	over := httptest.NewRequest("GET", "/", nil)
	over.Header.Set("X-Pad", strings.Repeat("a", httpwire.MaxHead))
	if err := httpwire.CheckHead(over); domain.AsError(err).Code != domain.CodeRequestHeadersTooLarge {
		t.Errorf("a head over MaxHead: %v", err)
	}
	if err := httpwire.CheckHead(httptest.NewRequest("GET", "/", nil)); err != nil {
		t.Errorf("a short head: %v", err)
	}
}
