package http

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http/httpguts"
)

// FuzzLaneHead checks the fast lane's parser against net/http's: every head
// the lane takes as plain, net/http's server reads too, to the same length,
// into the same request; the seeds are in testdata/fuzz/FuzzLaneHead.
func FuzzLaneHead(f *testing.F) {
	for _, s := range []string{
		"GET /v1/products/09520123456788 HTTP/1.1\r\nHost: pds\r\nAuthorization: Bearer k\r\n\r\n",
		"HEAD /v1/products/x/dpp?a=b HTTP/1.1\r\nhost: pds:8080\r\naccept-encoding: gzip\r\nPragma: no-cache\r\n\r\nGET / HTTP/1.1\r\n",
		"GET /v1/products/https%3A%2F%2Fid.gs1.org%2F01%2F1 HTTP/1.1\r\nHost: [::1]:80\r\nConnection: close\r\nX-A:\r\nX-A: \t2 \r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var h laneHead
		n, verdict := parseHead(b, &h)
		if verdict != headComplete {
			return
		}
		var fl fastLane
		got, ok := fl.request(&http.Request{}, &h, http.Header{}, "")
		br := bufio.NewReaderSize(bytes.NewReader(b), len(b)+16)
		want, err := http.ReadRequest(br)
		if !ok {
			if err == nil {
				t.Fatalf("%q: the lane refused the target that net/http took", b[:n])
			}
			return // handed over: net/http answers 400
		}
		if err != nil {
			t.Fatalf("the lane takes %q; net/http refuses it: %v", b[:n], err)
		}
		if used := len(b) - br.Buffered(); used != n {
			t.Fatalf("%q: the lane read %d bytes, net/http %d", b, n, used)
		}
		// What net/http's server refuses beyond ReadRequest (which takes
		// the Host out of the header; a missing one is "the no Host" case of
		// TestLaneAnswersMatchNetHTTP).
		if !httpguts.ValidHostHeader(want.Host) {
			t.Fatalf("the lane takes %q; net/http's server refuses its Host %q", b[:n], want.Host)
		}
		for k, vv := range want.Header {
			if !httpguts.ValidHeaderFieldName(k) {
				t.Fatalf("the lane takes %q; net/http's server refuses the name %q", b[:n], k)
			}
			for _, v := range vv {
				if !httpguts.ValidHeaderFieldValue(v) {
					t.Fatalf("the lane takes %q; net/http's server refuses the value %q", b[:n], v)
				}
			}
		}
		if got.Method != want.Method || got.RequestURI != want.RequestURI || !reflect.DeepEqual(got.URL, want.URL) ||
			got.Host != want.Host || !reflect.DeepEqual(got.Header, want.Header) || got.Close != want.Close ||
			want.ContentLength != 0 || want.Body != http.NoBody || got.Proto != want.Proto {
			t.Fatalf("%q:\nthe lane: %s %s %+v host %q close %v %v\nnet/http: %s %s %+v host %q close %v %v (body %d)", b[:n],
				got.Method, got.RequestURI, got.URL, got.Host, got.Close, got.Header,
				want.Method, want.RequestURI, want.URL, want.Host, want.Close, want.Header, want.ContentLength)
		}
	})
}

// TestPlainPathMatchesParseRequestURI: every target plainPath takes,
// url.ParseRequestURI parses into a URL with that Path and nothing else,
// byte by byte over printable ASCII, and at the path's ends.
func TestPlainPathMatchesParseRequestURI(t *testing.T) {
	taken := 0
	for c := byte(0x20); c < 0x80; c++ {
		for _, target := range []string{"/a" + string(c) + "b", "/" + string(c), "//" + string(c) + "/x", "/v1/products/" + string(c)} {
			if !plainPath([]byte(target)) {
				continue
			}
			taken++
			u, err := url.ParseRequestURI(target)
			if err != nil || !reflect.DeepEqual(u, &url.URL{Path: target}) {
				t.Errorf("%q: plainPath takes it; url.ParseRequestURI gives %#v, %v", target, u, err)
			}
		}
	}
	if taken == 0 {
		t.Fatal("plainPath took nothing")
	}
}

// serveBoth serves h through a fast lane wired as Listener.Open wires it,
// and through net/http alone; it returns the lane, its listener and both
// addresses.
func serveBoth(t *testing.T, h http.Handler, lim Limits) (fl *fastLane, ln net.Listener, lane, plain string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countedListener{Listener: l}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: lim.ReadHeaderTimeout, IdleTimeout: lim.IdleTimeout}
	fl = newFastLane(h, srv, lim, slog.New(slog.DiscardHandler))
	go fl.acceptLoop(cl)
	go srv.Serve(laneListener{Listener: cl, fl: fl})
	ps := httptest.NewServer(h)
	t.Cleanup(func() {
		ps.Close()
		cl.Close()
		fl.drain(context.Background())
		srv.Close()
	})
	return fl, cl, l.Addr().String(), strings.TrimPrefix(ps.URL, "http://")
}

// answers sends raw on a new connection to addr and sums up n answers:
// status, X-Late, whether a Content-Length came, and the body, or the
// error that ended them.
func answers(t *testing.T, addr, raw string, n int) []string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, raw)
	br := bufio.NewReader(c)
	var out []string
	for range n {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			return append(out, "error") // EOF or unexpected EOF: the connection ended
		}
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return append(out, res.Status+" body cut short")
		}
		out = append(out, fmt.Sprintf("%s X-Late=%q CL=%v %q", res.Status, res.Header.Get("X-Late"), res.ContentLength >= 0, b))
	}
	return out
}

// TestLaneKeepsNetHTTPWriterRules: handlers that break the writer's rules
// get what net/http gives them, on a connection that carries on or closes
// as net/http's does. (A Content-Length that is not a number is left out:
// net/http then sends it beside a chunked body; the lane drops it and
// counts the body.)
func TestLaneKeepsNetHTTPWriterRules(t *testing.T) {
	forged := "HTTP/1.1 200 OK\r\nX-Late: injected\r\nContent-Length: 6\r\n\r\nforged"
	cases := []struct {
		name string
		h    http.HandlerFunc
	}{
		{"writes past its Content-Length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "2")
			io.WriteString(w, "ok"+forged)
		}},
		{"writes short of its Content-Length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "ok")
		}},
		{"header after WriteHeader", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			w.Header().Set("X-Late", "1")
			io.WriteString(w, "x")
		}},
		{"body on a 204", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(204)
			io.WriteString(w, "x")
		}},
		{"nothing written", func(w http.ResponseWriter, r *http.Request) {}},
		{"panic", func(w http.ResponseWriter, r *http.Request) { panic("handler") }},
	}
	two := strings.Repeat("GET /a HTTP/1.1\r\nHost: x\r\n\r\n", 2)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fl, _, lane, plain := serveBoth(t, tc.h, DefaultLimits)
			got, want := answers(t, lane, two, 2), answers(t, plain, two, 2)
			if fl.served.Load() == 0 {
				t.Fatal("the lane answered nothing")
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("the lane: %q\nnet/http: %q", got, want)
			}
		})
	}
}

// TestLaneHeadsInPieces: a head that arrives in pieces after a pipelined one
// is answered by the lane; a request that is not plain, arriving in pieces,
// by net/http, whose header timeout is the one the lane had started.
func TestLaneHeadsInPieces(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Method) })
	lim := DefaultLimits
	fl, _, lane, _ := serveBoth(t, h, lim)
	for _, pieces := range [][]string{
		{"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HT", "TP/1.1\r\nHo", "st: x\r\n\r\n"},
		{"GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HT", "TP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n", "hi"},
	} {
		c, err := net.Dial("tcp", lane)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		for i, p := range pieces {
			io.WriteString(c, p)
			if i == 0 {
				res, err := http.ReadResponse(br, nil) // the first answer comes before the rest is sent
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
			}
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%q: %v", pieces, err)
		}
		b, _ := io.ReadAll(res.Body)
		if want := strings.Fields(pieces[0])[5]; string(b) != want {
			t.Errorf("%q: answered %q, want %q", pieces, b, want)
		}
		c.Close()
	}
	if n := fl.served.Load(); n != 3 {
		t.Errorf("the lane answered %d requests, want 3 (two GETs of the first connection, one of the second)", n)
	}
}

// TestHandedOverHeaderDeadline: net/http's first read deadline after a
// handover is kept to the header deadline the lane had set.
func TestHandedOverHeaderDeadline(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := &countedConn{Conn: sc, l: &countedListener{}}
	defer c.Close()
	c.headBy = time.Now().Add(50 * time.Millisecond)
	c.SetReadDeadline(time.Now().Add(time.Hour)) // net/http's header timeout, from its own start
	done := make(chan error, 1)
	go func() { _, err := c.Read(make([]byte, 1)); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read: %v, want the lane's deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read waited past the lane's header deadline")
	}
	if !c.headBy.IsZero() {
		t.Fatal("headBy outlived net/http's first deadline")
	}
}

// TestLaneDrainBusy: a request in the lane when the listener closes is
// answered, with Connection: close, before drain returns.
func TestLaneDrainBusy(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "late")
	})
	fl, cl, lane, _ := serveBoth(t, h, DefaultLimits)
	c, err := net.Dial("tcp", lane)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
	<-entered
	cl.Close()
	drained := make(chan error, 1)
	go func() { drained <- fl.drain(context.Background()) }()
	select {
	case <-drained:
		t.Fatal("drain returned with a request in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if string(b) != "late" || !res.Close {
		t.Fatalf("answer %q, close %v: want the answer, with Connection: close", b, res.Close)
	}
	if err := <-drained; err != nil {
		t.Fatalf("drain: %v", err)
	}
}

// TestLaneHeadPrefixesIncomplete: every prefix of a plain head is judged
// incomplete, never not plain, so a plain request that arrives in pieces,
// cut anywhere, stays in the lane.
func TestLaneHeadPrefixesIncomplete(t *testing.T) {
	for _, head := range []string{
		"GET /v1/products/09520123456788 HTTP/1.1\r\nHost: pds\r\nAuthorization: Bearer k\r\n\r\n",
		"HEAD /v1/products/x/dpp?a=b HTTP/1.1\r\nhost: pds:8080\r\nConnection: keep-alive\r\nX-A:\r\n\r\n",
	} {
		var h laneHead
		if n, v := parseHead([]byte(head), &h); v != headComplete || n != len(head) {
			t.Fatalf("%q: %v after %d bytes, want a plain head of %d", head, v, n, len(head))
		}
		for k := range len(head) {
			if _, v := parseHead([]byte(head[:k]), &h); v != headIncomplete {
				t.Errorf("%q: verdict %v, want incomplete", head[:k], v)
			}
		}
	}
}
