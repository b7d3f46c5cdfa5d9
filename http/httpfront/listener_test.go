package httpfront_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/http/httpfront"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/ingest/input/synthetic"
	"github.com/productdata/pds/internal/metrics"
	"github.com/productdata/pds/service"
)

func openListener(t *testing.T, lim httpfront.Limits) *httpfront.Listener {
	t.Helper()
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	svc, _ := ingesttest.Service(t, snap)
	m := metrics.New(nil)
	l := &httpfront.Listener{Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Limits: lim, Metrics: m, Log: ingesttest.Logger(t),
		Handler: pdshttp.NewWithOptions(svc, ingesttest.Logger(t), nil, pdshttp.Options{Metrics: m})}
	if err := l.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}

// A 401 closes its connection, so that idle unauthenticated keep-alive
// connections cannot pile up.
func TestUnauthenticatedClose(t *testing.T) {
	l := openListener(t, httpfront.DefaultLimits)
	addr := strings.TrimPrefix(l.URL(), "http://")
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /v1/whoami HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		if res.StatusCode != 401 || !res.Close {
			t.Fatalf("401 without Connection: close: %d %v", res.StatusCode, res.Header)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("the server kept the unauthenticated connection open: %v", err)
		}
	}
}

// TestCloseReportsServerClosed: Close closes the socket before Shutdown
// begins, and a listener stopped that way reports http.ErrServerClosed on
// Err, as Shutdown alone would, never a "use of closed network connection"
// that a watcher of Err would take for a listener that stopped on its own.
func TestCloseReportsServerClosed(t *testing.T) {
	l := openListener(t, httpfront.DefaultLimits)
	res, err := http.Get(l.URL() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if err := l.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for range 2 { // the public listener and the admin one
		select {
		case err := <-l.Err():
			if !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("Err after Close: %v, want http.ErrServerClosed", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no error on Err after Close")
		}
	}
}

// The Listener sends answers past net/http's 4 KiB buffer in one write
// (sendWhole); what it sends is what the handler alone sends, byte for byte
// apart from the request's id, its duration and the date, for every product
// read of a generated snapshot, GET and HEAD.
func TestListenerAnswersMatchHandler(t *testing.T) {
	svc, keys, ids := fortyProducts(t)
	m := metrics.New(nil)
	l := &httpfront.Listener{Addr: "127.0.0.1:0", Limits: httpfront.DefaultLimits, Metrics: m, Log: ingesttest.Logger(t),
		Handler: pdshttp.NewWithOptions(svc, ingesttest.Logger(t), nil, pdshttp.Options{Metrics: m})}
	if err := l.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	plain := httptest.NewServer(pdshttp.New(svc, ingesttest.Logger(t), nil))
	defer plain.Close()
	// No Accept-Encoding: the answers go out as they are, the path sendWhole gathers.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true}}
	perRequest := regexp.MustCompile(`"request_id":"req_[0-9A-Z]+"|"duration_ms":[0-9.]+`)
	get := func(method, url string) (int, http.Header, []byte) {
		req, _ := http.NewRequest(method, url, nil)
		req.Header.Set("Authorization", "Bearer "+keys[ingesttest.KeyFull])
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		// Content-Length counts the per-request members, whose lengths
		// vary: it is checked against the body, then kept as present or
		// not.
		if cl := res.Header.Get("Content-Length"); cl != "" {
			if n, _ := strconv.Atoi(cl); method == "GET" && n != len(body) {
				t.Fatalf("%s %s: Content-Length %d, body of %d bytes", method, url, n, len(body))
			}
			res.Header.Set("Content-Length", "n")
		}
		res.Header.Del("X-Request-Id")
		res.Header.Del("Date")
		return res.StatusCode, res.Header, perRequest.ReplaceAll(body, nil)
	}
	large := 0
	for _, id := range ids {
		for _, path := range []string{"", "/dpp", "/evidence"} {
			for _, method := range []string{"GET", "HEAD"} {
				p := "/v1/products/" + id + path
				st, h, body := get(method, l.URL()+p)
				wst, wh, wbody := get(method, plain.URL+p)
				if st != wst || !reflect.DeepEqual(h, wh) || !bytes.Equal(body, wbody) {
					t.Fatalf("%s %s: the Listener sent %d %v\n%s\nthe handler alone %d %v\n%s", method, p, st, h, body, wst, wh, wbody)
				}
				if method == "GET" && len(body) > 4<<10 {
					large++
				}
			}
		}
	}
	if large == 0 {
		t.Fatal("no answer past 4 KiB: the test does not reach the gathered writes")
	}
	t.Logf("%d product reads compared, %d GET answers past 4 KiB", len(ids)*6, large)
}

// fortyProducts builds a snapshot of 40 generated products and returns its
// service, the fixture's keys and the products' first identifiers.
func fortyProducts(t *testing.T) (*service.Service, map[string]string, []string) {
	t.Helper()
	in := t.TempDir()
	if err := synthetic.Generate(synthetic.Options{Products: 40, Seed: 7, Out: in}); err != nil {
		t.Fatal(err)
	}
	products, err := os.ReadFile(filepath.Join(in, "products.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range regexp.MustCompile(`"identifiers":\["([^"]+)"`).FindAllSubmatch(products, -1) {
		ids = append(ids, string(m[1]))
	}
	svc, keys := ingesttest.Service(t, ingesttest.Build(t, in))
	return svc, keys, ids
}
