package httpfront

import (
	"bufio"
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
)

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

// serveBoth serves h through a lane wired as Listener.Open wires it,
// and through net/http alone; it returns the lane, its listener and both
// addresses.
func serveBoth(t *testing.T, h http.Handler, lim Limits) (la *lane, ln net.Listener, laneAddr, plain string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tab := newTable(lim.MaxConns, lim.AddrShare, nil)
	cl := &countedListener{Listener: l, t: tab}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: lim.ReadHeaderTimeout, IdleTimeout: lim.IdleTimeout, ConnState: tab.connState}
	la = newLane(h, srv, tab, lim, slog.New(slog.DiscardHandler))
	go la.acceptLoop(cl)
	go srv.Serve(laneListener{Listener: cl, la: la})
	ps := httptest.NewServer(h)
	t.Cleanup(func() {
		ps.Close()
		cl.Close()
		la.drain(context.Background())
		srv.Close()
	})
	return la, cl, l.Addr().String(), strings.TrimPrefix(ps.URL, "http://")
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
			la, _, lane, plain := serveBoth(t, tc.h, DefaultLimits)
			got, want := answers(t, lane, two, 2), answers(t, plain, two, 2)
			if la.served.Load() == 0 {
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
	la, _, lane, _ := serveBoth(t, h, lim)
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
	if n := la.served.Load(); n != 3 {
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
	c := &Conn{Conn: sc}
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
	la, cl, lane, _ := serveBoth(t, h, DefaultLimits)
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
	go func() { drained <- la.drain(context.Background()) }()
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
