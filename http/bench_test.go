package http_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/ingest/ingesttest"
)

// BenchmarkGET is the whole REST handler of an identity, passport and
// evidence GET (routing, key check, view read, envelope, headers, access log
// to a discarding JSON logger) without the network, with -benchmem: the
// regression guard for allocations on the GET path.
func BenchmarkGET(b *testing.B) {
	const n = 5000
	snap := ingesttest.Build(b, ingesttest.SearchInput(b, n))
	svc, secrets := ingesttest.Service(b, snap)
	srv := pdshttp.New(svc, slog.New(slog.NewJSONHandler(io.Discard, nil)), nil)
	auth := "Bearer " + secrets[ingesttest.KeyFull]
	for _, v := range []struct{ name, suffix string }{{"identity", ""}, {"passport", "/dpp"}, {"evidence", "/evidence"}} {
		reqs := make([]*http.Request, 0, n/3)
		for i := 0; i < n; i += 3 {
			r := httptest.NewRequest("GET", fmt.Sprintf("/v1/products/internal_sku:P-%04d%s", i, v.suffix), nil)
			r.Header.Set("Authorization", auth)
			reqs = append(reqs, r)
		}
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			w := &discard{h: http.Header{}}
			i := 0
			for b.Loop() {
				clear(w.h)
				w.status = 0
				srv.ServeHTTP(w, reqs[i%len(reqs)])
				i++
				if w.status != 200 {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}

// discard is a ResponseWriter that keeps only the status.
type discard struct {
	h      http.Header
	status int
}

func (d *discard) Header() http.Header { return d.h }
func (d *discard) Write(b []byte) (int, error) {
	if d.status == 0 {
		d.status = 200
	}
	return len(b), nil
}
func (d *discard) WriteHeader(code int) { d.status = code }
