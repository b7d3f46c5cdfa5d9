package http_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/productdata/pds/domain"
	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/http/httpfront"
	"github.com/productdata/pds/http/httpwire"
	"github.com/productdata/pds/ingest/ingesttest"
)

// headOf is a GET of /livez whose head is exactly n bytes long, padded with
// an X-Pad header.
func headOf(t *testing.T, n int) []byte {
	t.Helper()
	const start, end = "GET /livez HTTP/1.1\r\nHost: pds.test\r\nX-Pad: ", "\r\n\r\n"
	pad := n - len(start) - len(end)
	if pad < 1 {
		t.Fatalf("a head of %d bytes is too short to pad", n)
	}
	return []byte(start + strings.Repeat("a", pad) + end)
}

// roundTrip sends head on a new connection and reads the answer. The
// deadline only keeps a server that never answers from holding the test.
func roundTrip(t *testing.T, url string, head []byte) (*http.Response, []byte, error) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	go c.Write(head) // may fail once the server stops reading and closes
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(res.Body)
	return res, body, err
}

// A request head (request line and headers) of up to 16 KiB is answered;
// one over it gets the REQUEST_HEADERS_TOO_LARGE problem and the
// connection closes; one far over it is answered or closed at once, never
// left waiting.
func TestRequestHeadLimit(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	svc, _ := ingesttest.Service(t, snap)
	log := ingesttest.Logger(t)
	l := &httpfront.Listener{Addr: "127.0.0.1:0", Handler: pdshttp.New(svc, log, nil), Limits: httpfront.DefaultLimits, Log: log}
	if err := l.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })

	for _, n := range []int{15 << 10, httpwire.MaxHead} {
		res, body, err := roundTrip(t, l.URL(), headOf(t, n))
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("a head of %d bytes: %v %v %s", n, err, res, body)
		}
	}
	for _, n := range []int{httpwire.MaxHead + 1, 17 << 10, httpfront.DefaultLimits.MaxHeaderBytes} {
		res, body, err := roundTrip(t, l.URL(), headOf(t, n))
		if err != nil {
			t.Fatalf("a head of %d bytes: %v", n, err)
		}
		var p httpwire.Problem
		if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge || res.Header.Get("Content-Type") != "application/problem+json" ||
			res.Header.Get("X-Content-Type-Options") != "nosniff" || !res.Close ||
			json.Unmarshal(body, &p) != nil || p.Code != domain.CodeRequestHeadersTooLarge || p.Status != 431 || p.RequestID == "" {
			t.Fatalf("a head of %d bytes: %d %v %s", n, res.StatusCode, res.Header, body)
		}
	}
	// Far over the limit, net/http stops reading: a plain 431, or the
	// connection reset under the rest of the head.
	res, _, err := roundTrip(t, l.URL(), headOf(t, 1<<20))
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		t.Fatalf("a head of 1 MiB: no answer and no close: %v", err)
	case err == nil && res.StatusCode != http.StatusRequestHeaderFieldsTooLarge:
		t.Fatalf("a head of 1 MiB: %d", res.StatusCode)
	}
	res, body, err := roundTrip(t, l.URL(), headOf(t, 1<<10))
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("after the large heads: %v %v %s", err, res, body)
	}
}
