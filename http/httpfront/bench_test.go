package httpfront_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/http/httpfront"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/internal/metrics"
)

// BenchmarkWireGET is an identity, passport and evidence GET over loopback,
// one connection, one request at a time, through a Listener with the fast
// lane and through one with net/http alone (NetHTTPOnly): the wire's share
// of a GET, and its allocations (the client's reads allocate nothing).
func BenchmarkWireGET(b *testing.B) {
	const n = 5000
	snap := ingesttest.Build(b, ingesttest.SearchInput(b, n))
	svc, secrets := ingesttest.Service(b, snap)
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	for _, side := range []struct {
		name        string
		netHTTPOnly bool
	}{{"lane", false}, {"net-http", true}} {
		m := metrics.New(nil)
		l := &httpfront.Listener{Addr: "127.0.0.1:0", Limits: httpfront.DefaultLimits, Metrics: m, Log: log, NetHTTPOnly: side.netHTTPOnly,
			Handler: pdshttp.NewWithOptions(svc, log, nil, pdshttp.Options{Metrics: m})}
		if err := l.Open(); err != nil {
			b.Fatal(err)
		}
		for _, v := range []struct{ name, suffix string }{{"identity", ""}, {"passport", "/dpp"}, {"evidence", "/evidence"}} {
			var reqs [][]byte
			for i := 0; i < n; i += 3 {
				reqs = append(reqs, []byte(fmt.Sprintf("GET /v1/products/internal_sku:P-%04d%s HTTP/1.1\r\nHost: pds\r\nAuthorization: Bearer %s\r\n\r\n",
					i, v.suffix, secrets[ingesttest.KeyFull])))
			}
			b.Run(side.name+"/"+v.name, func(b *testing.B) {
				c, err := net.Dial("tcp", strings.TrimPrefix(l.URL(), "http://"))
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				br := bufio.NewReaderSize(c, 64<<10)
				body := make([]byte, 64<<10)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := c.Write(reqs[i%len(reqs)]); err != nil {
						b.Fatal(err)
					}
					i++
					if err := readAnswer(br, body); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		l.Close(context.Background())
	}
}

// readAnswer reads a 200 answer with a Content-Length from br, without
// allocating.
func readAnswer(br *bufio.Reader, body []byte) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return fmt.Errorf("answer %q", line)
	}
	size := -1
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
			size = 0
			for _, c := range bytes.TrimSpace(v) {
				size = size*10 + int(c-'0')
			}
		}
	}
	if size < 0 || size > len(body) {
		return fmt.Errorf("an answer with Content-Length %d", size)
	}
	_, err = io.ReadFull(br, body[:size])
	return err
}
