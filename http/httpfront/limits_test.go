package httpfront_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/productdata/pds/http/httpfront"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/internal/metrics"
)

// gate holds the requests for /block until release is closed; entered
// receives one value per request that reached it. Every other path is
// answered "ok".
type gate struct {
	entered, release chan struct{}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/block" {
		g.entered <- struct{}{}
		<-g.release
	}
	io.WriteString(w, "ok")
}

// paths are the two ways a Listener serves: with the lane, and with
// net/http alone.
var paths = []struct {
	name        string
	netHTTPOnly bool
}{{"lane", false}, {"net-http-only", true}}

// openGated opens a Listener serving a gate.
func openGated(t *testing.T, lim httpfront.Limits, netHTTPOnly bool) (*httpfront.Listener, *gate, *metrics.Metrics) {
	t.Helper()
	g := &gate{entered: make(chan struct{}, 16), release: make(chan struct{})}
	m := metrics.New(nil)
	l := &httpfront.Listener{Addr: "127.0.0.1:0", Limits: lim, Metrics: m, Log: ingesttest.Logger(t), NetHTTPOnly: netHTTPOnly, Handler: g}
	if err := l.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-g.release:
		default:
			close(g.release)
		}
		l.Close(context.Background())
	})
	return l, g, m
}

// client is one connection to a Listener.
type client struct {
	net.Conn
	br *bufio.Reader
}

// dialFrom connects to l from the loopback address ip (127.0.0.0/8 is all
// loopback on Linux, so each test client can have an address of its own).
func dialFrom(t *testing.T, l *httpfront.Listener, ip string) *client {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", strings.TrimPrefix(l.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return &client{Conn: c, br: bufio.NewReader(c)}
}

// send writes a GET of path.
func (c *client) send(t *testing.T, path string) {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
}

// answer reads one answer: its status, and the body.
func (c *client) answer(t *testing.T) (*http.Response, string) {
	t.Helper()
	res, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// get sends a GET of path and reads its answer's status.
func (c *client) get(t *testing.T, path string) int {
	t.Helper()
	c.send(t, path)
	res, _ := c.answer(t)
	return res.StatusCode
}

// closed reports whether the server closes the connection: the next read
// ends (within the connection's deadline) with no byte.
func (c *client) closed() bool {
	n, err := c.br.Read(make([]byte, 1))
	return n == 0 && err == io.EOF
}

// waitIdle waits until l's idle connections are want, least recently used
// first. (A client reads its answer before the server marks its connection
// idle: the tests wait for the server's view before they go on.)
func waitIdle(t *testing.T, l *httpfront.Listener, want ...*client) {
	t.Helper()
	waitIdleAs(t, l, false, want...)
}

// waitIdleAs waits as waitIdle does; with anyOrder, for want in any order.
func waitIdleAs(t *testing.T, l *httpfront.Listener, anyOrder bool, want ...*client) {
	t.Helper()
	var addrs []string
	for _, c := range want {
		addrs = append(addrs, c.LocalAddr().String())
	}
	order := func() []string {
		got := httpfront.IdleOrder(l)
		if anyOrder {
			slices.Sort(got)
			slices.Sort(addrs)
		}
		return got
	}
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Equal(order(), addrs) {
		if time.Now().After(deadline) {
			t.Fatalf("idle connections %v, want %v", httpfront.IdleOrder(l), addrs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// counter is the value of the metric name{label} in m (0 when absent).
func counter(t *testing.T, m *metrics.Metrics, name, label string) float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, mt := range f.GetMetric() {
			var labels []string
			for _, lp := range mt.GetLabel() {
				labels = append(labels, lp.GetName()+"="+lp.GetValue())
			}
			if strings.Join(labels, ",") == label {
				return mt.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestCapRefusesWhenNoneIdle: with every connection busy at the cap, one
// more is answered 503 with Retry-After at once, never left waiting; once
// they are answered, the next new one is served.
func TestCapRefusesWhenNoneIdle(t *testing.T) {
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			lim := httpfront.DefaultLimits
			lim.MaxConns, lim.AddrShare = 2, 1
			l, g, m := openGated(t, lim, p.netHTTPOnly)
			var held []*client
			for range 2 {
				c := dialFrom(t, l, "127.0.0.1")
				c.send(t, "/block")
				<-g.entered
				held = append(held, c)
			}
			extra := dialFrom(t, l, "127.0.0.1")
			extra.send(t, "/x")
			res, body := extra.answer(t)
			if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" || res.Header.Get("Content-Type") != "application/problem+json" ||
				res.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(body, `"code":"SERVICE_UNAVAILABLE"`) || !res.Close {
				t.Fatalf("past the cap with none idle: %d %v %s", res.StatusCode, res.Header, body)
			}
			if n := counter(t, m, "pds_http_shed_total", "limit=connections"); n != 1 {
				t.Errorf("shed connections counted %v, want 1", n)
			}
			close(g.release)
			for _, c := range held {
				if res, body := c.answer(t); res.StatusCode != 200 || body != "ok" {
					t.Fatalf("held request: %d %q", res.StatusCode, body)
				}
			}
			waitIdleAs(t, l, true, held...)
			if st := dialFrom(t, l, "127.0.0.1").get(t, "/x"); st != 200 {
				t.Fatalf("a new connection once the others are idle: %d", st)
			}
		})
	}
}

// TestCapClosesLeastRecentlyUsedIdle: at the cap, a new connection is
// admitted by closing the idle connection least recently used, whether it
// waits for a next request or has sent nothing yet.
func TestCapClosesLeastRecentlyUsedIdle(t *testing.T) {
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			lim := httpfront.DefaultLimits
			lim.MaxConns, lim.AddrShare = 3, 1
			l, _, m := openGated(t, lim, p.netHTTPOnly)
			a := dialFrom(t, l, "127.0.0.1")
			if st := a.get(t, "/a"); st != 200 {
				t.Fatalf("a: %d", st)
			}
			waitIdle(t, l, a)
			b := dialFrom(t, l, "127.0.0.1")
			if st := b.get(t, "/b"); st != 200 {
				t.Fatalf("b: %d", st)
			}
			waitIdle(t, l, a, b)
			silent := dialFrom(t, l, "127.0.0.1")
			waitIdle(t, l, a, b, silent)
			// a was used least recently: it makes room for d.
			d := dialFrom(t, l, "127.0.0.1")
			if st := d.get(t, "/d"); st != 200 {
				t.Fatalf("d at the cap: %d", st)
			}
			if !a.closed() {
				t.Fatal("a, the least recently used idle connection, was not closed")
			}
			waitIdle(t, l, b, silent, d)
			// b is used again: silent is now the least recently used.
			if st := b.get(t, "/b"); st != 200 {
				t.Fatalf("b again: %d", st)
			}
			waitIdle(t, l, silent, d, b)
			e := dialFrom(t, l, "127.0.0.1")
			if st := e.get(t, "/e"); st != 200 {
				t.Fatalf("e at the cap: %d", st)
			}
			if !silent.closed() {
				t.Fatal("the silent connection, least recently used, was not closed")
			}
			waitIdle(t, l, d, b, e)
			if n := counter(t, m, "pds_http_idle_connections_closed_total", ""); n != 2 {
				t.Errorf("idle connections closed counted %v, want 2", n)
			}
		})
	}
}

// TestAddressShare: one client address holds at most its share of the cap;
// one more from it is answered 503, and another address is served.
func TestAddressShare(t *testing.T) {
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			lim := httpfront.DefaultLimits
			lim.MaxConns, lim.AddrShare = 8, 0.25 // two an address
			l, _, m := openGated(t, lim, p.netHTTPOnly)
			var mine []*client
			for range 2 {
				c := dialFrom(t, l, "127.0.0.2")
				if st := c.get(t, "/x"); st != 200 {
					t.Fatalf("within the share: %d", st)
				}
				mine = append(mine, c)
			}
			extra := dialFrom(t, l, "127.0.0.2")
			extra.send(t, "/x")
			res, body := extra.answer(t)
			if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" || res.Header.Get("X-Content-Type-Options") != "nosniff" ||
				!strings.Contains(body, "from your address") {
				t.Fatalf("past the address's share: %d %v %s", res.StatusCode, res.Header, body)
			}
			if st := dialFrom(t, l, "127.0.0.3").get(t, "/x"); st != 200 {
				t.Fatalf("another address: %d", st)
			}
			for _, c := range mine {
				if st := c.get(t, "/x"); st != 200 {
					t.Fatalf("a connection within the share, again: %d", st)
				}
			}
			if n := counter(t, m, "pds_http_shed_total", "limit=connections_per_address"); n != 1 {
				t.Errorf("shed per address counted %v, want 1", n)
			}
		})
	}
}

// TestSilentConnectionHeaderTimeout: a connection that sends nothing is
// closed after the header timeout, not the idle timeout (30 s here, past
// the test's 10 s wait), on both paths; one that sends its request in time
// is served.
func TestSilentConnectionHeaderTimeout(t *testing.T) {
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			lim := httpfront.DefaultLimits
			lim.ReadHeaderTimeout = 300 * time.Millisecond
			l, _, _ := openGated(t, lim, p.netHTTPOnly)
			silent := dialFrom(t, l, "127.0.0.1")
			silent.SetDeadline(time.Now().Add(10 * time.Second))
			if !silent.closed() {
				t.Fatal("a silent connection was not closed within 10 s")
			}
			if st := dialFrom(t, l, "127.0.0.1").get(t, "/x"); st != 200 {
				t.Fatalf("a request sent at once: %d", st)
			}
		})
	}
}

var statusLine = regexp.MustCompile(`HTTP/1\.1 [0-9]{3}[^\r]*`)

// TestHalfClosedHeadAnswered: a head cut short by the client's half-close
// gets from the lane what net/http gives it (400 once the request line is
// whole).
func TestHalfClosedHeadAnswered(t *testing.T) {
	listeners := map[bool]*httpfront.Listener{}
	for _, p := range paths {
		listeners[p.netHTTPOnly], _, _ = openGated(t, httpfront.DefaultLimits, p.netHTTPOnly)
	}
	answer := func(l *httpfront.Listener, raw string) string {
		c := dialFrom(t, l, "127.0.0.1")
		io.WriteString(c, raw)
		c.Conn.(*net.TCPConn).CloseWrite()
		b, _ := io.ReadAll(c.br)
		return strings.Join(statusLine.FindAllString(string(b), -1), ", ")
	}
	for _, raw := range []string{
		"GET /livez HTTP/1.1\r\nHo",
		"GET /livez HTTP/1.1\r\nHost: x\r\n",
		"GET /livez HTTP/1.1\r\n",
		"GET /livez HTTP/1.1",
		"GET /liv",
		"GE",
		"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHo",
	} {
		got, want := answer(listeners[false], raw), answer(listeners[true], raw)
		if got != want {
			t.Errorf("%q: the lane answered %q, net/http %q", raw, got, want)
		}
	}
	if got := answer(listeners[false], "GET /livez HTTP/1.1\r\nHo"); got != "HTTP/1.1 400 Bad Request" {
		t.Errorf("a head cut short by a half-close: %q, want 400", got)
	}
}
