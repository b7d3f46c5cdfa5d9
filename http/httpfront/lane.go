package httpfront

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// lane serves the plain requests of the Listener's connections itself and
// hands every other request, with the rest of its connection, to net/http
// (see the package documentation). It runs the same handler with a request
// built as net/http would build it, and writes the whole answer in one
// system call.
type lane struct {
	h   http.Handler
	srv *http.Server // for the requests' context, as net/http gives it
	t   *table
	lim Limits
	log *slog.Logger

	handoff chan net.Conn // connections for net/http (laneListener.Accept)
	done    chan struct{} // closed when no connection will be handed over
	doneErr error         // why done was closed, for Accept
	endOnce sync.Once

	closing    atomic.Bool
	acceptDone chan struct{} // closed when the accept loop has returned
	mu         sync.Mutex
	conns      map[*laneConn]struct{}
	wg         sync.WaitGroup // the connections' goroutines
	served     atomic.Int64   // requests the lane took (for the tests)
}

func newLane(h http.Handler, srv *http.Server, t *table, lim Limits, log *slog.Logger) *lane {
	return &lane{h: h, srv: srv, t: t, lim: lim, log: log, handoff: make(chan net.Conn), done: make(chan struct{}),
		acceptDone: make(chan struct{}), conns: map[*laneConn]struct{}{}}
}

// end closes done with err, once.
func (la *lane) end(err error) {
	la.endOnce.Do(func() {
		la.doneErr = err
		close(la.done)
	})
}

// acceptLoop accepts connections from ln and serves each on a goroutine of
// its own, until ln is closed. A temporary error (too many open files) is
// retried after a pause, as net/http does.
func (la *lane) acceptLoop(ln net.Listener) {
	defer close(la.acceptDone)
	var pause time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if te, ok := err.(interface{ Temporary() bool }); ok && te.Temporary() {
				pause = min(max(2*pause, 5*time.Millisecond), time.Second)
				la.log.Warn("accept failed; retrying", "error", err.Error(), "retry_in", pause.String())
				time.Sleep(pause)
				continue
			}
			la.end(err)
			return
		}
		pause = 0
		la.wg.Add(1)
		go la.serve(c.(*Conn))
	}
}

// drain waits, until ctx is done, for the lane's connections to finish the
// requests they are answering; idle ones are closed at once, and the others
// after their answer. Then no connection will be handed over any more. The
// listener must be closed first.
func (la *lane) drain(ctx context.Context) error {
	<-la.acceptDone
	la.closing.Store(true)
	la.mu.Lock()
	for lc := range la.conns {
		if lc.state.CompareAndSwap(laneIdle, laneWoken) {
			lc.c.SetReadDeadline(aLongTimeAgo) // wakes its Read; it closes
		}
	}
	la.mu.Unlock()
	waited := make(chan struct{})
	go func() { la.wg.Wait(); close(waited) }()
	var err error
	select {
	case <-waited:
	case <-ctx.Done():
		// Close the connections; a handler still running finishes on its
		// own, as with net/http's Shutdown, and its answer is lost.
		err = ctx.Err()
		la.mu.Lock()
		for lc := range la.conns {
			lc.c.Close()
		}
		la.mu.Unlock()
	}
	la.end(net.ErrClosed)
	return err
}

var aLongTimeAgo = time.Unix(1, 0)

// laneListener is what net/http's Serve accepts from: the connections the
// lane hands over.
type laneListener struct {
	net.Listener // the counted listener, for Addr and Close
	la           *lane
}

// Close closes the socket and ends the handovers: net/http's Serve returns
// (Shutdown and Close call it after the lane has drained, or on an error).
func (l laneListener) Close() error {
	err := l.Listener.Close()
	l.la.end(net.ErrClosed)
	return err
}

func (l laneListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.la.handoff:
		return c, nil
	case <-l.la.done:
		return nil, l.la.doneErr
	}
}

// The states of a lane connection, for drain.
const (
	laneBusy  int32 = iota // reading a request head, or answering
	laneIdle               // waiting for the first byte of a request
	laneWoken              // idle, and drain has set a past read deadline: close
)

// laneConn is a connection the lane serves.
type laneConn struct {
	c     *Conn
	state atomic.Int32
	// readBy and writeBy are the deadlines last set on the socket.
	readBy, writeBy time.Time
}

// laneBufSize is the read buffer of a lane connection: a request head that
// does not fit is handed to net/http, which reads up to MaxHeaderBytes.
const laneBufSize = 4 << 10

var laneBufs = sync.Pool{New: func() any { b := make([]byte, laneBufSize); return &b }}

// serve answers c's requests while they are plain, then hands c to net/http
// or closes it.
func (la *lane) serve(c *Conn) {
	defer la.wg.Done()
	lc := &laneConn{c: c}
	la.mu.Lock()
	la.conns[lc] = struct{}{}
	la.mu.Unlock()
	bufp := laneBufs.Get().(*[]byte)
	handed := false
	defer func() {
		if v := recover(); v != nil && v != http.ErrAbortHandler {
			stack := make([]byte, 64<<10)
			stack = stack[:runtime.Stack(stack, false)]
			la.log.Error("panic serving a request", "remote", c.RemoteAddr().String(), "panic", fmt.Sprint(v), "stack", string(stack))
		}
		la.mu.Lock()
		delete(la.conns, lc)
		la.mu.Unlock()
		laneBufs.Put(bufp)
		if !handed {
			c.Close()
		}
	}()
	handed = la.serveConn(lc, *bufp)
}

// serveConn is serve's loop; it reports whether c was handed to net/http.
func (la *lane) serveConn(lc *laneConn, buf []byte) bool {
	c := lc.c
	// The context net/http gives a connection's requests, copied into each.
	ctx := context.WithValue(context.Background(), http.ServerContextKey, la.srv)
	ctx = context.WithValue(ctx, http.LocalAddrContextKey, c.LocalAddr())
	base := (&http.Request{}).WithContext(connContext(ctx, c))
	remote := c.RemoteAddr().String()
	w := &laneWriter{header: http.Header{}, sent: http.Header{}}
	defer w.release()
	reqHeader := http.Header{}
	var head laneHead
	start, end := 0, 0
	first := true // no request read yet
	for {
		// Read until buf[start:end] begins with a whole request head.
		var n int
		headTimed := false // the header timeout is set for this head
		for {
			var verdict headVerdict
			n, verdict = parseHead(buf[start:end], &head)
			if verdict == headComplete {
				break
			}
			if verdict == headNotPlain || (start == 0 && end == len(buf)) {
				return la.handOver(lc, buf[start:end], headTimed)
			}
			if start > 0 {
				end = copy(buf, buf[start:end])
				start = 0
			}
			waiting := end == 0 // for the first byte of a request
			switch {
			case !headTimed && (first || !waiting):
				// A connection's first request, from its start (as net/http
				// times it), or a head cut short: the header timeout.
				lc.setReadBy(time.Now(), la.headerTimeout(), true)
				headTimed = true
			case waiting && !first:
				w.release() // an idle connection holds no answer buffers
				lc.setReadBy(time.Now(), la.idleTimeout(), false)
			}
			if waiting {
				if !la.t.idle(c) {
					return false // closed to make room for another
				}
				lc.state.Store(laneIdle)
				if la.closing.Load() {
					return false
				}
			}
			m, err := c.Read(buf[end:])
			if lc.state.Swap(laneBusy) == laneWoken {
				return false // drain closes it; its deadline may come after a handover
			}
			if waiting && !la.t.busy(c) {
				return false // closed to make room for another while it waited
			}
			end += m
			if err != nil && m == 0 {
				if end > 0 && errors.Is(err, io.EOF) {
					// A head cut short by the client's half-close:
					// net/http answers it (400) as it would have.
					return la.handOver(lc, buf[:end], headTimed)
				}
				return false // closed, reset, or a timeout: net/http closes such a connection too
			}
		}
		first = false
		req, ok := buildRequest(base, &head, reqHeader, remote)
		if !ok {
			return la.handOver(lc, buf[start:end], headTimed)
		}
		start += n
		w.reset(head.method == "HEAD")
		la.served.Add(1)
		la.h.ServeHTTP(w, req)
		closeAfter := head.close || la.closing.Load()
		out, body, closeAfter := w.appendAnswer(closeAfter)
		lc.setWriteBy(time.Now(), la.lim.WriteTimeout)
		var err error
		if len(body) > 0 {
			bufs := net.Buffers{out, body}
			_, err = bufs.WriteTo(c.Conn) // one writev
		} else {
			_, err = c.Conn.Write(out)
		}
		if err != nil || closeAfter {
			return false
		}
	}
}

// handOver gives lc's connection to net/http, which reads pending first.
// When the head in pending came in pieces (headTimed), net/http's header
// timeout ends where the lane's did.
func (la *lane) handOver(lc *laneConn, pending []byte, headTimed bool) bool {
	c := lc.c
	c.pending = slices.Clone(pending)
	c.handedOver = true
	if headTimed && !lc.readBy.IsZero() {
		c.headBy = lc.readBy
	}
	select {
	case la.handoff <- c:
		return true
	case <-la.done:
		return false
	}
}

func (la *lane) idleTimeout() time.Duration {
	if la.lim.IdleTimeout > 0 {
		return la.lim.IdleTimeout
	}
	return la.lim.ReadTimeout
}

func (la *lane) headerTimeout() time.Duration {
	if la.lim.ReadHeaderTimeout > 0 {
		return la.lim.ReadHeaderTimeout
	}
	return la.lim.ReadTimeout
}

// setReadBy makes the read deadline now+d. Unless exact, a deadline already
// set that falls short of it by less than a tenth of d (at most a second) is
// kept: moving it costs a timer update, on every request of a busy
// connection.
func (lc *laneConn) setReadBy(now time.Time, d time.Duration, exact bool) {
	if d <= 0 {
		if exact && !lc.readBy.IsZero() { // no header timeout: the idle one stops too, as in net/http
			lc.readBy = time.Time{}
			lc.c.SetReadDeadline(time.Time{})
		}
		return
	}
	by := now.Add(d)
	if !exact && !lc.readBy.Before(by.Add(-min(d/10, time.Second))) && !lc.readBy.After(by) {
		return
	}
	lc.readBy = by
	lc.c.SetReadDeadline(by)
}

// setWriteBy makes the write deadline about now+d, as setReadBy.
func (lc *laneConn) setWriteBy(now time.Time, d time.Duration) {
	if d <= 0 {
		return
	}
	by := now.Add(d)
	if !lc.writeBy.Before(by.Add(-min(d/10, time.Second))) && !lc.writeBy.After(by) {
		return
	}
	lc.writeBy = by
	lc.c.SetWriteDeadline(by)
}
