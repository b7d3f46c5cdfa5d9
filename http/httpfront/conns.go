package httpfront

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/http/httpwire"
	"github.com/productdata/pds/internal/metrics"
)

// table is the listener's account of its open connections: how many there
// are, how many each client address holds, and which are idle, least
// recently used first. A connection is idle while it waits for the first
// byte of a request, its first or a next one, on either path.
type table struct {
	max     int // open connections at most; 0: no cap
	perAddr int // connections one address may hold; 0: no limit
	metrics *metrics.Metrics

	mu     sync.Mutex
	open   int
	byAddr map[netip.Addr]int
	// head and tail are the idle connections, least recently used first.
	head, tail *Conn
}

func newTable(maxConns int, share float64, m *metrics.Metrics) *table {
	t := &table{max: maxConns, metrics: m, byAddr: map[netip.Addr]int{}}
	if maxConns > 0 && share > 0 && share < 1 {
		t.perAddr = max(1, int(share*float64(maxConns)))
	}
	return t
}

// admission is what the table says to a new connection.
type admission int

const (
	admitted admission = iota
	refusedCap
	refusedAddr
)

// admit counts c in, or refuses it: past its address's share, or at the
// cap with no idle connection to close for it. At the cap, the least
// recently used idle connection is closed to make room (evicted is it).
func (t *table) admit(c *Conn) (_ admission, evicted *Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.perAddr > 0 && t.byAddr[c.addr] >= t.perAddr {
		return refusedAddr, nil
	}
	if t.max > 0 && t.open >= t.max {
		if t.head == nil {
			return refusedCap, nil
		}
		evicted = t.head
		t.unlink(evicted)
		t.countOut(evicted)
	}
	t.open++
	t.byAddr[c.addr]++
	c.counted = true
	t.link(c) // it has sent nothing yet
	return admitted, evicted
}

// idle marks c as waiting for a request, the most recently used idle
// connection. It reports false when c was closed to make room for another.
func (t *table) idle(c *Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !c.counted {
		return false
	}
	if !c.idle {
		t.link(c)
	}
	return true
}

// busy marks c as reading or answering a request: it is not closed to make
// room. It reports false when c was closed to make room for another.
func (t *table) busy(c *Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.idle {
		t.unlink(c)
	}
	return c.counted
}

// release counts c out when it closes (once).
func (t *table) release(c *Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.idle {
		t.unlink(c)
	}
	if c.counted {
		t.countOut(c)
	}
}

func (t *table) countOut(c *Conn) {
	c.counted = false
	t.open--
	if n := t.byAddr[c.addr] - 1; n > 0 {
		t.byAddr[c.addr] = n
	} else {
		delete(t.byAddr, c.addr)
	}
}

// link appends c to the idle list.
func (t *table) link(c *Conn) {
	c.idle = true
	c.prev, c.next = t.tail, nil
	if t.tail != nil {
		t.tail.next = c
	} else {
		t.head = c
	}
	t.tail = c
}

func (t *table) unlink(c *Conn) {
	c.idle = false
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		t.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		t.tail = c.prev
	}
	c.prev, c.next = nil, nil
}

// connState follows net/http's view of its connections: a connection it
// waits on for a request is idle, one it reads or answers busy.
func (t *table) connState(nc net.Conn, st http.ConnState) {
	c, ok := nc.(*Conn)
	if !ok {
		return
	}
	switch st {
	case http.StateNew:
		if !c.handedOver {
			t.idle(c) // a new connection of --net-http-only (the lane hands over busy ones)
		}
	case http.StateIdle:
		t.idle(c)
	case http.StateActive, http.StateHijacked:
		t.busy(c)
	}
}

// addrOf is the client address a connection counts against: its IP, or
// for IPv6 its /64 (one host usually holds a whole /64).
func addrOf(c net.Conn) netip.Addr {
	ta, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return netip.Addr{}
	}
	a := ta.AddrPort().Addr().Unmap()
	if a.Is6() {
		a = netip.PrefixFrom(a, 64).Masked().Addr()
	}
	return a
}

// countedListener admits the connections of a listener through the table.
// A connection it refuses is answered 503 with Retry-After and closed at
// once, instead of being left to wait unanswered; a connection it closes to
// make room is closed as net/http closes an idle keep-alive connection,
// without a word.
type countedListener struct {
	net.Listener
	t *table

	closeOnce sync.Once
	closeErr  error
}

// Close closes the socket once: Listener.Close closes it before
// http.Server.Shutdown, which closes it again.
func (l *countedListener) Close() error {
	l.closeOnce.Do(func() { l.closeErr = l.Listener.Close() })
	return l.closeErr
}

func (l *countedListener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := &Conn{Conn: nc, t: l.t, addr: addrOf(nc)}
		verdict, evicted := l.t.admit(c)
		if evicted != nil {
			evicted.Conn.Close() // its reader (the lane or net/http) wakes and closes it
			if l.t.metrics != nil {
				l.t.metrics.IdleClosed()
			}
		}
		if verdict == admitted {
			return c, nil
		}
		if l.t.metrics != nil {
			if verdict == refusedAddr {
				l.t.metrics.Shed("connections_per_address")
			} else {
				l.t.metrics.Shed("connections")
			}
		}
		go refuse(nc, verdict)
	}
}

// refuse answers a connection the table refused and closes it.
func refuse(c net.Conn, verdict admission) {
	c.SetWriteDeadline(time.Now().Add(time.Second))
	if verdict == refusedAddr {
		c.Write(overloadedAddr)
	} else {
		c.Write(overloaded)
	}
	c.Close()
}

var (
	overloaded     = refusal("too many connections; try again shortly")
	overloadedAddr = refusal("too many connections from your address; reuse the ones you hold, or try again shortly")
)

func refusal(detail string) []byte {
	p := httpwire.NewProblem(&domain.Error{Code: domain.CodeServiceUnavailable, Detail: detail}, "")
	b, _ := domain.Marshal(p)
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\n" +
		"X-Content-Type-Options: nosniff\r\nRetry-After: 1\r\n" +
		"Connection: close\r\nContent-Length: " + strconv.Itoa(len(b)) + "\r\n\r\n" + string(b))
}

// Conn is a connection of the Listener.
type Conn struct {
	net.Conn
	t    *table
	addr netip.Addr
	once sync.Once

	// Guarded by t.mu: counted is true while the connection counts
	// against the cap; idle while it is in the idle list, between prev
	// and next.
	counted, idle bool
	prev, next    *Conn

	// handedOver is set by the lane before it hands the connection to
	// net/http.
	handedOver bool
	// gathered holds what is written between Gather and Send; nil when not
	// gathering. Only the goroutine serving the connection's request
	// writes to it.
	gathered *[]byte
	// werr is the error of a failed send, returned by every later Write.
	werr error
	// pending is what the lane read and did not answer; Read returns it
	// first, to net/http.
	pending []byte
	// headBy, when set, is the header deadline the lane was holding a head
	// to: net/http's first read deadline, its header timeout, is kept to
	// it, so that a handover does not restart it.
	headBy time.Time
}

// SetReadDeadline sets the read deadline, kept to headBy once after a
// handover.
func (c *Conn) SetReadDeadline(t time.Time) error {
	if !c.headBy.IsZero() {
		if t.IsZero() || t.After(c.headBy) {
			t = c.headBy
		}
		c.headBy = time.Time{}
	}
	return c.Conn.SetReadDeadline(t)
}

// Read returns what the lane read and left first, then reads the socket.
func (c *Conn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// Close closes the socket and counts the connection out.
func (c *Conn) Close() error {
	c.once.Do(func() {
		if c.t != nil {
			c.t.release(c)
		}
	})
	return c.Conn.Close()
}

// Write writes p, or keeps it while gathering.
func (c *Conn) Write(p []byte) (int, error) {
	if c.werr != nil {
		return 0, c.werr
	}
	if c.gathered != nil {
		*c.gathered = append(*c.gathered, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// Gather makes the connection keep what is written to it until Send.
func (c *Conn) Gather() {
	c.gathered = gatherBufs.Get().(*[]byte)
}

// Send writes what was gathered in one system call and stops gathering. A
// failed write closes the socket, as net/http closes a connection whose
// write failed: the answer may have left in part, so nothing more may
// follow it on this connection.
func (c *Conn) Send() {
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

// connContext puts the request's connection into its context, where the
// handler finds it with httpwire.GathererOf.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*Conn); ok {
		return httpwire.WithGatherer(ctx, cc)
	}
	return ctx
}
