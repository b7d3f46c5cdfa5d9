package httpfront_test

import (
	"context"
	"strings"
	"testing"
	"time"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/http/httpfront"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/internal/flood"
	"github.com/productdata/pds/internal/metrics"
)

// floodSizes are the flood's sizes and the cap, scaled down together when
// this process may not open that many files: the test holds both ends of
// every connection, the flood's and the server's (at most the cap).
func floodSizes(t *testing.T) (keepAlive, silent, maxConns int) {
	t.Helper()
	keepAlive, silent, maxConns = 10000, 5000, httpfront.DefaultLimits.MaxConns
	limit := openFilesLimit(t)
	const spare = 512 // the test's own files, the flood's workers, refused connections being answered
	need := uint64(keepAlive + maxConns + spare)
	if limit < need {
		scale := float64(limit-spare) / float64(keepAlive+maxConns)
		keepAlive, silent, maxConns = int(scale*float64(keepAlive)), int(scale*float64(silent)), int(scale*float64(maxConns))
		t.Logf("RLIMIT_NOFILE is %d: flood of %d keep-alive and %d silent connections against a cap of %d", limit, keepAlive, silent, maxConns)
	}
	return keepAlive, silent, maxConns
}

// TestFloodLeavesRoomForNewClients floods one address's connections at a
// listener, keep-alive ones with a valid key or silent ones, and meanwhile
// sends requests as a new client from another address, one connection each:
// the new client's first request is served, and none sent after the first
// second is refused. With the default limits, the share per address stops
// the flood. With no limit per address, and timeouts longer than the test
// (so that the flood's connections stay until something closes them on a
// slow machine too), the cap is reached and idle connections, least
// recently used first, make room.
func TestFloodLeavesRoomForNewClients(t *testing.T) {
	keepAlive, silent, maxConns := floodSizes(t)
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	svc, keys := ingesttest.Service(t, snap)
	request := "GET /v1/whoami HTTP/1.1\r\nHost: pds.test\r\nAuthorization: Bearer " + keys[ingesttest.KeyFull] + "\r\n\r\n"
	for _, tc := range []struct {
		name   string
		silent bool
		share  float64
	}{
		{"keep-alive, share", false, httpfront.DefaultLimits.AddrShare},
		{"keep-alive, no share", false, 1},
		{"silent, share", true, httpfront.DefaultLimits.AddrShare},
		{"silent, no share", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := httpfront.DefaultLimits
			lim.MaxConns, lim.AddrShare = maxConns, tc.share
			if tc.share == 1 {
				lim.ReadHeaderTimeout, lim.IdleTimeout = time.Hour, time.Hour
			}
			m := metrics.New(nil)
			l := &httpfront.Listener{Addr: "127.0.0.1:0", Limits: lim, Metrics: m, Log: ingesttest.Logger(t),
				Handler: pdshttp.NewWithOptions(svc, ingesttest.Logger(t), nil, pdshttp.Options{Metrics: m})}
			if err := l.Open(); err != nil {
				t.Fatal(err)
			}
			defer l.Close(context.Background())
			conns := keepAlive
			if tc.silent {
				conns = silent
			}
			res, err := flood.Run(flood.Options{Addr: strings.TrimPrefix(l.URL(), "http://"), Silent: tc.silent, Conns: conns,
				From: "127.0.0.2", ProbeFrom: "127.0.0.3", Request: request, ProbeFor: 3 * time.Second, Interval: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d connections, cap %d, share %v: %v; shed %v (cap) %v (address), idle closed %v", conns, maxConns, tc.share, res,
				counter(t, m, "pds_http_shed_total", "limit=connections"), counter(t, m, "pds_http_shed_total", "limit=connections_per_address"),
				counter(t, m, "pds_http_idle_connections_closed_total", ""))
			if res.Served == 0 || res.FirstServed < 0 {
				t.Fatalf("the new client was never served: %v", res)
			}
			if res.RefusedAfter1s != 0 {
				t.Errorf("%d of the new client's requests were refused after the first second: %v", res.RefusedAfter1s, res)
			}
			// The flood did reach the limit it was meant to show.
			if tc.share < 1 && counter(t, m, "pds_http_shed_total", "limit=connections_per_address") == 0 {
				t.Errorf("the flood never reached its address's share")
			}
			if tc.share == 1 && counter(t, m, "pds_http_idle_connections_closed_total", "") == 0 {
				t.Errorf("the flood never reached the cap")
			}
		})
	}
}
