package httpfront

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/productdata/pds/internal/metrics"
)

// Limits and timeouts of the public listener, with their defaults.
type Limits struct {
	// MaxConns bounds the open connections (default 4096). At the cap, the
	// idle connection least recently used is closed to admit a new one;
	// with none idle, the new one is answered 503 with Retry-After and
	// closed at once.
	MaxConns int
	// AddrShare is the share of MaxConns one client address (an IPv4
	// address, an IPv6 /64) may hold (default 0.25: 1024 connections, as
	// many as the requests answered at once); one more from it is answered
	// 503. 0 or 1 and above: no limit per address.
	AddrShare float64
	// ReadHeaderTimeout bounds the time to read a request's headers,
	// counted for a connection's first request from its start (5s).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included (15s:
	// a 1 MiB body at 100 kB/s).
	ReadTimeout time.Duration
	// WriteTimeout bounds answering one request (30s: the largest answer,
	// a 1000-identifier resolve, takes well under a second).
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle that long after an
	// answer (30s).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds how much of a request head net/http reads
	// (32 KiB, and the 4 KiB net/http adds for its buffer): past that,
	// net/http answers 431 itself, in plain text, and closes the
	// connection. The handler holds heads to a limit of its own below it
	// (pds's REST handler: 16 KiB), and answers one past that as it answers
	// every refusal.
	MaxHeaderBytes int
}

// DefaultLimits are the listener defaults.
var DefaultLimits = Limits{MaxConns: 4096, AddrShare: 0.25, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
	WriteTimeout: 30 * time.Second, IdleTimeout: 30 * time.Second, MaxHeaderBytes: 32 << 10}

// Listener serves Handler on Addr and, when AdminAddr is set, /metrics and
// Go's pprof profiles on a second listener. Open starts both; Close drains
// them.
type Listener struct {
	Addr, AdminAddr string
	Handler         http.Handler
	Metrics         *metrics.Metrics
	Limits          Limits
	Log             *slog.Logger
	// NetHTTPOnly turns the lane off: net/http answers every request.
	NetHTTPOnly bool

	ln, adminLn net.Listener
	lane        *lane // nil with NetHTTPOnly
	srv, admin  *http.Server
	errc        chan error
	closing     atomic.Bool // Close has begun
}

// Open listens on Addr (and AdminAddr) and serves in the background.
func (l *Listener) Open() error {
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return err
	}
	l.Serve(ln)
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

// Serve serves Handler on ln in the background, as Open does on Addr
// (without the admin listener).
func (l *Listener) Serve(ln net.Listener) {
	lim := l.Limits
	t := newTable(lim.MaxConns, lim.AddrShare, l.Metrics)
	l.ln = &countedListener{Listener: ln, t: t}
	l.srv = &http.Server{Handler: l.Handler, ReadHeaderTimeout: lim.ReadHeaderTimeout, ReadTimeout: lim.ReadTimeout,
		WriteTimeout: lim.WriteTimeout, IdleTimeout: lim.IdleTimeout, MaxHeaderBytes: lim.MaxHeaderBytes,
		ErrorLog: slog.NewLogLogger(l.Log.Handler(), slog.LevelWarn), ConnContext: connContext, ConnState: t.connState}
	l.errc = make(chan error, 2)
	serveLn := l.ln
	if !l.NetHTTPOnly {
		l.lane = newLane(l.Handler, l.srv, t, lim, l.Log)
		go l.lane.acceptLoop(l.ln)
		serveLn = laneListener{Listener: l.ln, la: l.lane}
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
// The lane's connections are drained first, while net/http still takes
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
