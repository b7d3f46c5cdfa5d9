package http

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/httpwire"
	"github.com/productdata/pds/metrics"
)

// Limits and timeouts of the public listener, with their defaults.
type Limits struct {
	// MaxConns bounds the open connections; one more is answered 503 with
	// Retry-After and closed at once (default 4096).
	MaxConns int
	// ReadHeaderTimeout bounds the time to read a request's headers (5s).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included (15s:
	// a 1 MiB body at 100 kB/s).
	ReadTimeout time.Duration
	// WriteTimeout bounds answering one request (30s: the largest answer,
	// a 1000-identifier resolve, takes well under a second).
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle that long (30s).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request headers (16 KiB).
	MaxHeaderBytes int
}

// DefaultLimits are the listener defaults.
var DefaultLimits = Limits{MaxConns: 4096, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
	WriteTimeout: 30 * time.Second, IdleTimeout: 30 * time.Second, MaxHeaderBytes: 16 << 10}

// Listener serves the REST handler on Addr and, when AdminAddr is set,
// /metrics and Go's pprof profiles on a second listener. Open starts both;
// Close drains them.
type Listener struct {
	Addr, AdminAddr string
	Handler         *Server
	Metrics         *metrics.Metrics
	Limits          Limits
	Log             *slog.Logger
	// NetHTTPOnly turns the fast lane off: net/http answers every request
	// (see fastLane).
	NetHTTPOnly bool

	ln, adminLn net.Listener
	lane        *fastLane // nil with NetHTTPOnly
	srv, admin  *http.Server
	errc        chan error
	closing     atomic.Bool // Close has begun
}

// Open listens on Addr (and AdminAddr) and serves in the background.
func (l *Listener) Open() error {
	lim := l.Limits
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return err
	}
	l.ln = &countedListener{Listener: ln, max: int64(lim.MaxConns), metrics: l.Metrics}
	l.srv = &http.Server{Handler: l.Handler, ReadHeaderTimeout: lim.ReadHeaderTimeout, ReadTimeout: lim.ReadTimeout,
		WriteTimeout: lim.WriteTimeout, IdleTimeout: lim.IdleTimeout, MaxHeaderBytes: lim.MaxHeaderBytes,
		ErrorLog: slog.NewLogLogger(l.Log.Handler(), slog.LevelWarn), ConnContext: connContext}
	l.errc = make(chan error, 2)
	serveLn := l.ln
	if !l.NetHTTPOnly {
		l.lane = newFastLane(l.Handler, l.srv, lim, l.Log)
		go l.lane.acceptLoop(l.ln)
		serveLn = laneListener{Listener: l.ln, fl: l.lane}
	}
	go func() {
		err := l.srv.Serve(serveLn)
		if l.lane != nil {
			l.lane.end(net.ErrClosed) // no more handovers: a connection the lane holds closes instead
		}
		if l.closing.Load() && errors.Is(err, net.ErrClosed) {
			err = http.ErrServerClosed // Close closed the socket before Shutdown began
		}
		l.errc <- err
	}()
	if l.AdminAddr == "" {
		return nil
	}
	if l.adminLn, err = net.Listen("tcp", l.AdminAddr); err != nil {
		l.srv.Close()
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", l.Metrics.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	l.admin = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(l.Log.Handler(), slog.LevelWarn)}
	go func() { l.errc <- l.admin.Serve(l.adminLn) }()
	return nil
}

// URL is the public listener's base URL.
func (l *Listener) URL() string { return "http://" + l.ln.Addr().String() }

// AdminURL is the admin listener's base URL, or "".
func (l *Listener) AdminURL() string {
	if l.adminLn == nil {
		return ""
	}
	return "http://" + l.adminLn.Addr().String()
}

// Err receives an error when a listener stops on its own.
func (l *Listener) Err() <-chan error { return l.errc }

// Close stops accepting and waits for the requests in flight to finish,
// until ctx is done; then it drops what is left and returns ctx's error.
//
// The listening socket is closed before Shutdown begins. Shutdown alone
// first marks the server as shutting down and only then closes the socket:
// in between, a connection that finishes a request is closed, its client
// dials again, and the new connection waits in the kernel's backlog until
// the socket closes and resets it. Closed first, the socket refuses every
// new connection, and clients whose keep-alive connections Shutdown then
// closes fail to connect (or, for a GET, Go's client retries and is
// refused) instead of being reset.
//
// The fast lane's connections are drained first, while net/http still takes
// the connections the lane hands over; then Shutdown drains net/http's.
func (l *Listener) Close(ctx context.Context) error {
	l.closing.Store(true)
	l.ln.Close()
	if l.lane != nil {
		l.lane.drain(ctx)
	}
	err := l.srv.Shutdown(ctx)
	if err != nil {
		l.srv.Close()
	}
	if l.admin != nil {
		l.admin.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// countedListener answers connections past max with a 503 problem and
// Retry-After and closes them, instead of letting them wait unanswered.
type countedListener struct {
	net.Listener
	max     int64
	open    atomic.Int64
	metrics *metrics.Metrics

	closeOnce sync.Once
	closeErr  error
}

// Close closes the socket once: Listener.Close closes it before
// http.Server.Shutdown, which closes it again.
func (l *countedListener) Close() error {
	l.closeOnce.Do(func() { l.closeErr = l.Listener.Close() })
	return l.closeErr
}

var overloaded = func() []byte {
	p := httpwire.NewProblem(&domain.Error{Code: domain.CodeServiceUnavailable, Detail: "too many connections; try again shortly"}, "")
	b, _ := domain.Marshal(p)
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nRetry-After: 1\r\n" +
		"Connection: close\r\nContent-Length: " + strconv.Itoa(len(b)) + "\r\n\r\n" + string(b))
}()

func (l *countedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.max <= 0 || l.open.Add(1) <= l.max {
			return &countedConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		if l.metrics != nil {
			l.metrics.Shed("connections")
		}
		go func() {
			c.SetWriteDeadline(time.Now().Add(time.Second))
			c.Write(overloaded)
			c.Close()
		}()
	}
}

type countedConn struct {
	net.Conn
	l    *countedListener
	once sync.Once
	// gathered holds what is written between gather and send (sendWhole);
	// nil when not gathering. Only the goroutine serving the connection's
	// request writes to it.
	gathered *[]byte
	// werr is the error of a failed send, returned by every later Write.
	werr error
	// pending is what the fast lane read and did not answer; Read returns
	// it first, to net/http.
	pending []byte
	// headBy, when set, is the header deadline the fast lane was holding a
	// head cut short to: net/http's first read deadline, its header
	// timeout, is kept to it, so that a handover does not restart it.
	headBy time.Time
}

func (c *countedConn) SetReadDeadline(t time.Time) error {
	if !c.headBy.IsZero() {
		if t.IsZero() || t.After(c.headBy) {
			t = c.headBy
		}
		c.headBy = time.Time{}
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *countedConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

func (c *countedConn) Write(p []byte) (int, error) {
	if c.werr != nil {
		return 0, c.werr
	}
	if c.gathered != nil {
		*c.gathered = append(*c.gathered, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// gather makes the connection keep what is written to it until send.
func (c *countedConn) gather() {
	c.gathered = gatherBufs.Get().(*[]byte)
}

// send writes what was gathered in one system call and stops gathering. A
// failed write closes the socket, as net/http closes a connection whose
// write failed: the answer may have left in part, so nothing more may
// follow it on this connection.
func (c *countedConn) send() {
	buf := c.gathered
	c.gathered = nil
	if len(*buf) > 0 {
		if _, c.werr = c.Conn.Write(*buf); c.werr != nil {
			c.Conn.Close()
		}
	}
	if cap(*buf) <= maxGatheredBuf {
		*buf = (*buf)[:0]
		gatherBufs.Put(buf)
	}
}

var gatherBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// maxGatheredBuf is the largest gathering buffer kept for reuse.
const maxGatheredBuf = 64 << 10

// connKey is the context key of the request's *countedConn.
type connKey struct{}

// connContext puts the request's connection into its context, for sendWhole.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*countedConn); ok {
		return context.WithValue(ctx, connKey{}, cc)
	}
	return ctx
}
