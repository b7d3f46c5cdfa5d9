package httpfront_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/http/httpfront"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/internal/metrics"
)

// laneListeners opens two Listeners on one 40-product snapshot: one with
// the lane, one with net/http alone. It returns them, a product's
// identifier and the full key.
func laneListeners(t *testing.T, lim httpfront.Limits) (lane, plain *httpfront.Listener, id, key string) {
	t.Helper()
	svc, keys, ids := fortyProducts(t)
	id = ids[0]
	open := func(netHTTPOnly bool) *httpfront.Listener {
		m := metrics.New(nil)
		l := &httpfront.Listener{Addr: "127.0.0.1:0", Limits: lim, Metrics: m, Log: ingesttest.Logger(t), NetHTTPOnly: netHTTPOnly,
			Handler: pdshttp.NewWithOptions(svc, ingesttest.Logger(t), nil, pdshttp.Options{Metrics: m})}
		if err := l.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close(context.Background()) })
		return l
	}
	return open(false), open(true), id, keys[ingesttest.KeyFull]
}

// answer is a response as the comparison sees it.
type answer struct {
	status int
	header http.Header
	body   string
}

var perRequestBody = regexp.MustCompile(`"request_id":"req_[0-9A-Z]+"|"duration_ms":[0-9.]+`)

// exchange writes raw to a new connection to l and reads one answer for
// each of methods (the requests' methods, in order). Headers that differ
// from one request to the next (Date, X-Request-Id) are dropped, and a
// Content-Length, checked against the body, is kept as present or not; a
// gzip body is decompressed.
func exchange(t *testing.T, l *httpfront.Listener, raw string, methods ...string) []answer {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(l.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var out []answer
	for _, m := range methods {
		res, err := http.ReadResponse(br, &http.Request{Method: m})
		if err != nil {
			t.Fatalf("%q: answer %d: %v", raw, len(out)+1, err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("%q: answer %d's body: %v", raw, len(out)+1, err)
		}
		if cl := res.Header.Get("Content-Length"); cl != "" && m != "HEAD" {
			if n, _ := strconv.Atoi(cl); n != len(body) {
				t.Fatalf("%q: Content-Length %s, body of %d bytes", raw, cl, len(body))
			}
		}
		if res.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		for _, h := range []string{"Date", "X-Request-Id"} {
			res.Header.Del(h)
		}
		// How the body is framed is compared; a Content-Length's value
		// counts the per-request members, and was checked above.
		if res.Header.Get("Content-Length") != "" {
			res.Header.Set("Content-Length", "n")
		}
		if len(res.TransferEncoding) > 0 {
			res.Header["Transfer-Encoding"] = res.TransferEncoding
		}
		if res.Close {
			res.Header.Set("Connection", "close") // however the server said it
		}
		out = append(out, answer{res.StatusCode, res.Header, string(perRequestBody.ReplaceAll(body, nil))})
	}
	return out
}

// TestLaneAnswersMatchNetHTTP sends the same raw requests to a Listener with
// the lane and to one with net/http alone, and compares the answers.
// The plain ones must have been answered by the lane, the others by
// net/http, on the same connection where they follow a plain one.
func TestLaneAnswersMatchNetHTTP(t *testing.T) {
	lane, plain, id, key := laneListeners(t, httpfront.DefaultLimits)
	auth := "Authorization: Bearer " + key + "\r\n"
	get := func(path string, more ...string) string {
		return "GET " + path + " HTTP/1.1\r\nHost: pds.test\r\n" + auth + strings.Join(more, "") + "\r\n"
	}
	p := "/v1/products/" + id
	etag := exchange(t, plain, get(p), "GET")[0].header.Get("Etag")
	if etag == "" {
		t.Fatal("no ETag on a product read")
	}
	resolve := `{"identifiers":["` + id + `"]}`
	post := "POST /v1/products/resolve HTTP/1.1\r\nHost: pds.test\r\n" + auth + "Content-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(resolve)) + "\r\n\r\n" + resolve
	long := "X-Padding: " + strings.Repeat("p", 5000) + "\r\n"
	cases := []struct {
		name    string
		raw     string
		methods []string
		lane    int64 // requests the lane must answer
	}{
		{"identity", get(p), []string{"GET"}, 1},
		{"passport", get(p + "/dpp"), []string{"GET"}, 1},
		{"evidence", get(p + "/evidence"), []string{"GET"}, 1},
		{"HEAD", strings.Replace(get(p+"/evidence"), "GET", "HEAD", 1), []string{"HEAD"}, 1},
		{"gzip, lower-case names", "GET " + p + "/dpp HTTP/1.1\r\nhost: pds.test\r\nauthorization: Bearer " + key + "\r\naccept-encoding: gzip\r\n\r\n", []string{"GET"}, 1},
		{"If-None-Match", get(p, "If-None-Match: "+etag+"\r\n"), []string{"GET"}, 1},
		{"no key", "GET " + p + " HTTP/1.1\r\nHost: pds.test\r\n\r\n", []string{"GET"}, 1},
		{"no route", get("/nowhere"), []string{"GET"}, 1},
		{"bad identifier", get("/v1/products/0952012345678X"), []string{"GET"}, 1},
		{"search", get("/v1/products/search?manufacturer=acme&limit=2"), []string{"GET"}, 1},
		{"escaped Digital Link", get("/v1/products/https%3A%2F%2Fid.gs1.org%2F01%2F" + strings.TrimPrefix(id, "gtin:")), []string{"GET"}, 1},
		{"probes", get("/livez") + get("/readyz") + get("/v1/whoami"), []string{"GET", "GET", "GET"}, 3},
		{"Pragma", get(p, "Pragma: no-cache\r\n"), []string{"GET"}, 1},
		{"Connection: close", get(p, "Connection: close\r\n"), []string{"GET"}, 1},
		{"pipelined", get(p) + get(p+"/dpp") + get(p+"/evidence"), []string{"GET", "GET", "GET"}, 3},
		{"OPTIONS", "OPTIONS " + p + " HTTP/1.1\r\nHost: pds.test\r\n\r\n", []string{"OPTIONS"}, 0},
		{"POST after GETs", get(p) + post + get(p+"/dpp"), []string{"GET", "POST", "GET"}, 1},
		{"HTTP/1.0", "GET /livez HTTP/1.0\r\n\r\n", []string{"GET"}, 0},
		{"Content-Length on a GET", get(p, "Content-Length: 0\r\n"), []string{"GET"}, 0},
		{"Expect", get(p, "Expect: 100-continue\r\n"), []string{"GET"}, 0},
		{"no Host", "GET /livez HTTP/1.1\r\n\r\n", []string{"GET"}, 0},
		{"two Hosts", get("/livez", "Host: other.test\r\n"), []string{"GET"}, 0},
		{"bad header name", get("/livez", "Bad Name: x\r\n"), []string{"GET"}, 0},
		{"bad Host", "GET /livez HTTP/1.1\r\nHost: a b\r\n\r\n", []string{"GET"}, 0},
		{"folded header", get("/livez", "X-A: 1\r\n  2\r\n"), []string{"GET"}, 0},
		{"bare LF", "GET /livez HTTP/1.1\nHost: pds.test\n\n", []string{"GET"}, 0},
		{"head past 4 KiB", get(p, long), []string{"GET"}, 0},
		{"absolute form", "GET http://pds.test/livez HTTP/1.1\r\nHost: pds.test\r\n\r\n", []string{"GET"}, 0},
		{"control byte in target", "GET /livez\x01 HTTP/1.1\r\nHost: pds.test\r\n\r\n", []string{"GET"}, 0},
		{"MCP", get("/v1/mcp"), []string{"GET"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := httpfront.LaneServed(lane)
			got := exchange(t, lane, tc.raw, tc.methods...)
			if n := httpfront.LaneServed(lane) - before; n != tc.lane {
				t.Errorf("the lane answered %d requests, want %d", n, tc.lane)
			}
			want := exchange(t, plain, tc.raw, tc.methods...)
			for i := range want {
				if got[i].status != want[i].status || !headersEqual(got[i].header, want[i].header) || got[i].body != want[i].body {
					t.Errorf("answer %d: the lane sent %d %v\n%s\nnet/http %d %v\n%s", i+1,
						got[i].status, got[i].header, got[i].body, want[i].status, want[i].header, want[i].body)
				}
			}
		})
	}
	if httpfront.LaneServed(plain) != 0 {
		t.Fatal("the net/http-only listener has a lane")
	}
}

func headersEqual(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\x00") != strings.Join(b[k], "\x00") {
			return false
		}
	}
	return true
}

// TestLaneTimeouts: a head cut short is closed after the header timeout,
// an idle connection after the idle timeout, and Close closes an idle lane
// connection at once instead of waiting for its timeout.
func TestLaneTimeouts(t *testing.T) {
	lim := httpfront.DefaultLimits
	lim.ReadHeaderTimeout = 200 * time.Millisecond // the idle timeout stays 30 s
	lane, _, _, _ := laneListeners(t, lim)
	addr := strings.TrimPrefix(lane.URL(), "http://")
	lim.IdleTimeout = 300 * time.Millisecond
	idleLane, _, _, _ := laneListeners(t, lim)
	closedBy := func(c net.Conn) error {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.Copy(io.Discard, c)
		return err // nil: the server closed it
	}
	t.Run("head cut short", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /livez HTTP/1.1\r\nHo")
		if err := closedBy(c); err != nil {
			t.Fatalf("the connection was not closed: %v", err)
		}
	})
	t.Run("idle", func(t *testing.T) {
		c, err := net.Dial("tcp", strings.TrimPrefix(idleLane.URL(), "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("livez: %v %v", res, err)
		}
		res.Body.Close()
		if err := closedBy(c); err != nil {
			t.Fatalf("the idle connection was not closed: %v", err)
		}
	})
	t.Run("Close", func(t *testing.T) {
		lim := httpfront.DefaultLimits // a 30 s idle timeout
		lane, _, _, _ := laneListeners(t, lim)
		c, err := net.Dial("tcp", strings.TrimPrefix(lane.URL(), "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := lane.Close(ctx); err != nil {
			t.Fatalf("Close: %v (the idle connection held it)", err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := br.ReadByte(); err != io.EOF {
			t.Fatalf("the idle connection is still open after Close: %v", err)
		}
	})
}
