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
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/productdata/pds/http/httpfront"
)

// countingListener counts the writes made to its connections, each a
// write system call on a real socket, and fails them on demand.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
	fail   *atomic.Bool
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, writes: l.writes, fail: l.fail}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
	fail   *atomic.Bool
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	if c.fail.Load() {
		return 0, errors.New("write failed on purpose")
	}
	return c.Conn.Write(p)
}

// serveCounted serves handler through httpfront's Listener with net/http
// alone (the path sendWhole gathers on) over a counting listener.
func serveCounted(t *testing.T, handler http.Handler) (addr string, writes *atomic.Int64, fail *atomic.Bool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	writes, fail = new(atomic.Int64), new(atomic.Bool)
	l := &httpfront.Listener{Handler: handler, Limits: httpfront.DefaultLimits, Log: slog.New(slog.DiscardHandler), NetHTTPOnly: true}
	l.Serve(countingListener{Listener: ln, writes: writes, fail: fail})
	t.Cleanup(func() { l.Close(context.Background()) })
	return ln.Addr().String(), writes, fail
}

// testBody is a body of n bytes that is not one byte repeated.
func testBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// An answer sent by sendWhole leaves in one write whatever its size up to
// sendWholeMax; the same answer written as handlers write leaves in two once
// it is past net/http's 4 KiB buffer (the control rows). Every answer arrives
// whole, on one keep-alive connection.
func TestSendWholeOneWrite(t *testing.T) {
	addr, writes, _ := serveCounted(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("size"))
		rec := &recorder{ResponseWriter: w}
		rec.Header().Set("Content-Length", strconv.Itoa(n))
		if r.URL.Query().Get("whole") == "1" {
			sendWhole(rec, r, testBody(n))
			return
		}
		rec.WriteHeader(http.StatusOK)
		rec.Write(testBody(n))
	}))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	cases := []struct {
		name   string
		method string
		size   int
		whole  bool
		writes int64
	}{
		{"identity-sized, under the buffer", "GET", 440, true, 1},
		{"passport-sized", "GET", 5500, true, 1},
		{"evidence-sized", "GET", 11000, true, 1},
		{"at the gathering limit", "GET", sendWholeMax, true, 1},
		{"past the gathering limit: written as net/http writes it", "GET", sendWholeMax + 1, true, 2},
		{"HEAD of an evidence-sized answer", "HEAD", 11000, true, 1},
		{"control: passport-sized, written as handlers write", "GET", 5500, false, 2},
		{"control: evidence-sized, written as handlers write", "GET", 11000, false, 2},
		{"evidence-sized again, after the controls", "GET", 11000, true, 1},
	}
	for _, tc := range cases {
		writes.Store(0)
		whole := 0
		if tc.whole {
			whole = 1
		}
		fmt.Fprintf(c, "%s /?size=%d&whole=%d HTTP/1.1\r\nHost: x\r\n\r\n", tc.method, tc.size, whole)
		req, _ := http.NewRequest(tc.method, "/", nil)
		res, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := testBody(tc.size)
		if tc.method == "HEAD" {
			want = nil
		}
		if res.StatusCode != http.StatusOK || res.ContentLength != int64(tc.size) || !bytes.Equal(body, want) {
			t.Fatalf("%s: status %d, Content-Length %d, %d bytes of body (want %d)", tc.name, res.StatusCode, res.ContentLength, len(body), len(want))
		}
		if got := writes.Load(); got != tc.writes {
			t.Errorf("%s: %d writes, want %d", tc.name, got, tc.writes)
		}
	}
}

// A failed send closes the connection: the client sees it end, and is not
// left waiting for an answer on a connection that may have sent half of one.
func TestSendWholeFailedWriteCloses(t *testing.T) {
	addr, _, fail := serveCounted(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		rec.Header().Set("Content-Length", "11000")
		sendWhole(rec, r, testBody(11000))
	}))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fail.Store(true)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := c.Read(make([]byte, 1))
	if n != 0 || err != io.EOF {
		t.Fatalf("after a failed write: read %d bytes, %v; want the connection closed (EOF)", n, err)
	}
}
