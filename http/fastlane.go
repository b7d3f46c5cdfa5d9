package http

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// The fast lane serves the plain requests of the Listener's connections
// itself and hands every other request, with the rest of its connection, to
// net/http. A plain request is a GET or HEAD of HTTP/1.1 in origin form,
// outside /v1/mcp, whose head fits laneBufSize and holds a Host and no
// body, Expect, Upgrade or Transfer-Encoding (see parseHead). It runs the
// same handler (the Server, with its request id, access log, metrics,
// authentication and answers) with a request built as net/http would build
// it, and writes the whole answer in one system call.
//
// What it saves against net/http, a request: the per-request context with
// its cancel and the goroutine that watches the connection for a close, the
// read and write deadlines set on every request (here they are moved only
// when they would fall short of the timeout by more than a tenth), the
// buffered reader and writer, and the sorting of a header map's keys through
// a pool.
type fastLane struct {
	h   http.Handler
	srv *http.Server // for the requests' context, as net/http gives it
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

func newFastLane(h http.Handler, srv *http.Server, lim Limits, log *slog.Logger) *fastLane {
	return &fastLane{h: h, srv: srv, lim: lim, log: log, handoff: make(chan net.Conn), done: make(chan struct{}),
		acceptDone: make(chan struct{}), conns: map[*laneConn]struct{}{}}
}

// end closes done with err, once.
func (fl *fastLane) end(err error) {
	fl.endOnce.Do(func() {
		fl.doneErr = err
		close(fl.done)
	})
}

// acceptLoop accepts connections from ln and serves each on a goroutine of
// its own, until ln is closed. A temporary error (too many open files) is
// retried after a pause, as net/http does.
func (fl *fastLane) acceptLoop(ln net.Listener) {
	defer close(fl.acceptDone)
	var pause time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if te, ok := err.(interface{ Temporary() bool }); ok && te.Temporary() {
				pause = min(max(2*pause, 5*time.Millisecond), time.Second)
				fl.log.Warn("accept failed; retrying", "error", err.Error(), "retry_in", pause.String())
				time.Sleep(pause)
				continue
			}
			fl.end(err)
			return
		}
		pause = 0
		fl.wg.Add(1)
		go fl.serve(c.(*countedConn))
	}
}

// drain waits, until ctx is done, for the lane's connections to finish the
// requests they are answering; idle ones are closed at once, and the others
// after their answer. Then no connection will be handed over any more. The
// listener must be closed first.
func (fl *fastLane) drain(ctx context.Context) error {
	<-fl.acceptDone
	fl.closing.Store(true)
	fl.mu.Lock()
	for lc := range fl.conns {
		if lc.state.CompareAndSwap(laneIdle, laneWoken) {
			lc.c.SetReadDeadline(aLongTimeAgo) // wakes its Read; it closes
		}
	}
	fl.mu.Unlock()
	waited := make(chan struct{})
	go func() { fl.wg.Wait(); close(waited) }()
	var err error
	select {
	case <-waited:
	case <-ctx.Done():
		// Close the connections; a handler still running finishes on its
		// own, as with net/http's Shutdown, and its answer is lost.
		err = ctx.Err()
		fl.mu.Lock()
		for lc := range fl.conns {
			lc.c.Close()
		}
		fl.mu.Unlock()
	}
	fl.end(net.ErrClosed)
	return err
}

var aLongTimeAgo = time.Unix(1, 0)

// laneListener is what net/http's Serve accepts from: the connections the
// lane hands over.
type laneListener struct {
	net.Listener // the counted listener, for Addr and Close
	fl           *fastLane
}

// Close closes the socket and ends the handovers: net/http's Serve returns
// (Shutdown and Close call it after the lane has drained, or on an error).
func (l laneListener) Close() error {
	err := l.Listener.Close()
	l.fl.end(net.ErrClosed)
	return err
}

func (l laneListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.fl.handoff:
		return c, nil
	case <-l.fl.done:
		return nil, l.fl.doneErr
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
	c     *countedConn
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
func (fl *fastLane) serve(c *countedConn) {
	defer fl.wg.Done()
	lc := &laneConn{c: c}
	fl.mu.Lock()
	fl.conns[lc] = struct{}{}
	fl.mu.Unlock()
	bufp := laneBufs.Get().(*[]byte)
	handed := false
	defer func() {
		if v := recover(); v != nil && v != http.ErrAbortHandler {
			stack := make([]byte, 64<<10)
			stack = stack[:runtime.Stack(stack, false)]
			fl.log.Error("panic serving a request", "remote", c.RemoteAddr().String(), "panic", fmt.Sprint(v), "stack", string(stack))
		}
		fl.mu.Lock()
		delete(fl.conns, lc)
		fl.mu.Unlock()
		laneBufs.Put(bufp)
		if !handed {
			c.Close()
		}
	}()
	handed = fl.serveConn(lc, *bufp)
}

// serveConn is serve's loop; it reports whether c was handed to net/http.
func (fl *fastLane) serveConn(lc *laneConn, buf []byte) bool {
	c := lc.c
	// The context net/http gives a connection's requests, copied into each.
	ctx := context.WithValue(context.Background(), http.ServerContextKey, fl.srv)
	ctx = context.WithValue(ctx, http.LocalAddrContextKey, c.LocalAddr())
	base := (&http.Request{}).WithContext(connContext(ctx, c))
	remote := c.RemoteAddr().String()
	w := &laneWriter{header: http.Header{}, sent: http.Header{}}
	defer w.release()
	reqHeader := http.Header{}
	var head laneHead
	start, end := 0, 0
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
				return fl.handOver(lc, buf[start:end], headTimed)
			}
			if start > 0 {
				end = copy(buf, buf[start:end])
				start = 0
			}
			if end == 0 {
				w.release() // an idle connection holds no answer buffers
				lc.setReadBy(time.Now(), fl.idleTimeout(), false)
				lc.state.Store(laneIdle)
				if fl.closing.Load() {
					return false
				}
			} else if !headTimed {
				// A head cut short: the rest must come within the header timeout.
				lc.setReadBy(time.Now(), fl.headerTimeout(), true)
				headTimed = true
			}
			m, err := c.Read(buf[end:])
			if lc.state.Swap(laneBusy) == laneWoken {
				return false // drain closes it; its deadline may come after a handover
			}
			end += m
			if err != nil && m == 0 {
				return false // closed, reset, or a timeout: net/http closes such a connection too
			}
		}
		req, ok := fl.request(base, &head, reqHeader, remote)
		if !ok {
			return fl.handOver(lc, buf[start:end], headTimed)
		}
		start += n
		w.reset(head.method == "HEAD")
		fl.served.Add(1)
		fl.h.ServeHTTP(w, req)
		closeAfter := head.close || fl.closing.Load()
		out, body, closeAfter := w.appendAnswer(closeAfter)
		lc.setWriteBy(time.Now(), fl.lim.WriteTimeout)
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
func (fl *fastLane) handOver(lc *laneConn, pending []byte, headTimed bool) bool {
	c := lc.c
	c.pending = slices.Clone(pending)
	if headTimed && !lc.readBy.IsZero() {
		c.headBy = lc.readBy
	}
	select {
	case fl.handoff <- c:
		return true
	case <-fl.done:
		return false
	}
}

func (fl *fastLane) idleTimeout() time.Duration {
	if fl.lim.IdleTimeout > 0 {
		return fl.lim.IdleTimeout
	}
	return fl.lim.ReadTimeout
}

func (fl *fastLane) headerTimeout() time.Duration {
	if fl.lim.ReadHeaderTimeout > 0 {
		return fl.lim.ReadHeaderTimeout
	}
	return fl.lim.ReadTimeout
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

// laneHead is a parsed request head; its slices point into the read buffer.
type laneHead struct {
	method string // "GET" or "HEAD"
	target []byte
	host   []byte
	close  bool // Connection: close
	// fields are the header lines but Host, as name and value pairs.
	fields [][2][]byte
}

type headVerdict int

const (
	headIncomplete headVerdict = iota // more bytes may make it a plain head
	headComplete                      // a plain request head, n bytes long
	headNotPlain                      // net/http must answer it
)

// parseHead parses a request head from b: on headComplete, n is its length.
// It accepts a strict subset of what net/http accepts (FuzzLaneHead checks
// it against http.ReadRequest), and says headNotPlain for anything else,
// which net/http then answers as it always has, a malformed request with
// its 400.
func parseHead(b []byte, h *laneHead) (int, headVerdict) {
	h.method, h.target, h.host, h.close, h.fields = "", nil, nil, false, h.fields[:0]
	rest := b
	switch {
	case bytes.HasPrefix(rest, []byte("GET /")):
		h.method, rest = "GET", rest[4:]
	case bytes.HasPrefix(rest, []byte("HEAD /")):
		h.method, rest = "HEAD", rest[5:]
	case len(rest) < 6 && (bytes.HasPrefix([]byte("GET /"), rest) || bytes.HasPrefix([]byte("HEAD /"), rest)):
		return 0, headIncomplete
	default:
		return 0, headNotPlain
	}
	line, rest, ok := cutLine(rest)
	if !ok {
		return 0, incomplete(rest)
	}
	target, proto, ok := bytes.Cut(line, []byte(" "))
	if !ok || string(proto) != "HTTP/1.1" {
		return 0, headNotPlain
	}
	if bytes.HasPrefix(target, []byte("/v1/mcp")) {
		return 0, headNotPlain // streams (server-sent events): net/http's
	}
	h.target = target
	hosts := 0
	for {
		line, rest, ok = cutLine(rest)
		if !ok {
			return 0, incomplete(rest)
		}
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || len(name) == 0 || !validFieldName(name) {
			return 0, headNotPlain // also a folded line, which begins with a space
		}
		value = bytes.Trim(value, " \t")
		if !validFieldValue(value) {
			return 0, headNotPlain
		}
		switch {
		case asciiEqualFold(name, "Host"):
			hosts++
			h.host = value
			continue
		case asciiEqualFold(name, "Connection"):
			switch {
			case asciiEqualFold(value, "close"):
				h.close = true
			case asciiEqualFold(value, "keep-alive"):
			default:
				return 0, headNotPlain
			}
		case asciiEqualFold(name, "Content-Length"), asciiEqualFold(name, "Transfer-Encoding"),
			asciiEqualFold(name, "Expect"), asciiEqualFold(name, "Upgrade"), asciiEqualFold(name, "Trailer"):
			return 0, headNotPlain
		}
		h.fields = append(h.fields, [2][]byte{name, value})
	}
	if hosts != 1 || !httpguts.ValidHostHeader(string(h.host)) {
		return 0, headNotPlain
	}
	return len(b) - len(rest), headComplete
}

// incomplete is the verdict on a head cut short: a line so far holding a
// bare CR or LF never becomes plain.
func incomplete(partial []byte) headVerdict {
	if i := bytes.IndexByte(partial, '\n'); i >= 0 {
		return headNotPlain
	}
	if i := bytes.IndexByte(partial, '\r'); i >= 0 && i < len(partial)-1 {
		return headNotPlain
	}
	return headIncomplete
}

// cutLine cuts b at its first CRLF. A bare LF or CR is not plain: the line
// is returned with ok true and a byte cutLine's callers reject (a CR or LF
// is neither a field name's byte nor a field value's, nor part of a target
// or "HTTP/1.1").
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, b, false
	}
	if i == 0 || b[i-1] != '\r' {
		return b[:i+1], b[i+1:], true // keeps the LF, so the line is refused
	}
	return b[:i-1], b[i+1:], true
}

func validFieldName(b []byte) bool {
	for _, c := range b {
		if !httpguts.IsTokenRune(rune(c)) {
			return false
		}
	}
	return true
}

// validFieldValue: what net/textproto accepts in a value, HTAB, visible
// ASCII and bytes past it, with no CR or LF.
func validFieldValue(b []byte) bool {
	for _, c := range b {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// asciiEqualFold reports whether b is s, ASCII letters folded, for an
// ASCII s. bytes.EqualFold folds Unicode too, but a rune that folds to an
// ASCII letter (K, the Kelvin sign) takes more than one byte, so with the
// lengths equal every byte of b is ASCII.
func asciiEqualFold(b []byte, s string) bool {
	return len(b) == len(s) && bytes.EqualFold(b, []byte(s))
}

// request builds the http.Request net/http would build from a plain head:
// the same URL, Host, canonical header names, and Cache-Control for a
// Pragma: no-cache. header is reused, cleared, by every request of the
// connection. ok is false where net/http would refuse the target.
func (fl *fastLane) request(base *http.Request, h *laneHead, header http.Header, remote string) (*http.Request, bool) {
	uri := string(h.target)
	var u *url.URL
	if plainPath(h.target) {
		u = &url.URL{Path: uri} // what url.ParseRequestURI makes of it
	} else {
		var err error
		if u, err = url.ParseRequestURI(uri); err != nil {
			return nil, false
		}
		if strings.HasPrefix(u.Path, "/v1/mcp") {
			return nil, false // /v1/%6Dcp, routed on its decoded path
		}
	}
	clear(header)
	for _, f := range h.fields {
		k := canonicalKey(f[0])
		header[k] = append(header[k], string(f[1]))
	}
	if pragma, ok := header["Pragma"]; ok && len(pragma) > 0 && pragma[0] == "no-cache" {
		if _, ok := header["Cache-Control"]; !ok {
			header["Cache-Control"] = []string{"no-cache"}
		}
	}
	r := new(http.Request)
	*r = *base
	r.Method = h.method
	r.URL = u
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	r.Header = header
	r.Body = http.NoBody
	r.Host = string(h.host)
	r.RemoteAddr = remote
	r.RequestURI = uri
	r.Close = h.close
	return r, true
}

// plainPath reports whether target is a path that url.ParseRequestURI
// takes as it is, for Path alone: a '/' and bytes that are neither escaped
// nor escaping in a path (no '%', no query), as url's own shouldEscape has
// them; a '//' start is a path there too, for a request.
func plainPath(target []byte) bool {
	if len(target) == 0 || target[0] != '/' {
		return false
	}
	for _, c := range target {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_.~$&+,/:;=@", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// canonicalKey is textproto's canonical form of a header name, without an
// allocation for the names clients send most.
func canonicalKey(b []byte) string {
	switch string(b) {
	case "Authorization", "authorization":
		return "Authorization"
	case "Accept", "accept":
		return "Accept"
	case "Accept-Encoding", "accept-encoding":
		return "Accept-Encoding"
	case "User-Agent", "user-agent":
		return "User-Agent"
	case "If-None-Match", "if-none-match":
		return "If-None-Match"
	case "Connection", "connection":
		return "Connection"
	}
	return textproto.CanonicalMIMEHeaderKey(string(b))
}

// laneWriter is the http.ResponseWriter of a lane request: it keeps the
// answer until the handler returns. It is not an http.Flusher: the lane
// serves no streaming route.
type laneWriter struct {
	// header is what Header returns; WriteHeader moves it to sent (and gives
	// Header a cleared map), so that a header set after WriteHeader is not
	// sent, as with net/http.
	header, sent http.Header
	status       int
	head         bool  // a HEAD request: the body is counted, kept for sniffing, not sent
	declared     int64 // the Content-Length the handler set, or -1
	written      int64 // bytes the handler wrote, refused ones too
	body, out    []byte
	bodyBuf      *[]byte // body's and out's pooled buffers, nil when released
	outBuf       *[]byte
	keys         []string
}

// laneAnswers holds the answer buffers of idle lane connections.
var laneAnswers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

func (w *laneWriter) reset(head bool) {
	clear(w.header)
	w.status, w.head, w.declared, w.written = 0, head, -1, 0
	if w.bodyBuf == nil {
		w.bodyBuf, w.outBuf = laneAnswers.Get().(*[]byte), laneAnswers.Get().(*[]byte)
	}
	w.body, w.out = (*w.bodyBuf)[:0], (*w.outBuf)[:0]
}

// release gives the answer buffers back, keeping none past maxGatheredBuf.
func (w *laneWriter) release() {
	if w.bodyBuf == nil {
		return
	}
	putAnswerBuf(w.bodyBuf, w.body)
	putAnswerBuf(w.outBuf, w.out)
	w.bodyBuf, w.outBuf, w.body, w.out = nil, nil, nil, nil
}

// putAnswerBuf gives p back to laneAnswers holding b, the slice last written
// into it, unless b grew past maxGatheredBuf.
func putAnswerBuf(p *[]byte, b []byte) {
	if cap(b) <= maxGatheredBuf {
		*p = b[:0]
		laneAnswers.Put(p)
	}
}

func (w *laneWriter) Header() http.Header { return w.header }

func (w *laneWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code)) // as net/http
	}
	if w.status != 0 || (code >= 100 && code < 200) {
		return // a second call, or an informational answer: net/http ignores the one, pds sends none of the other
	}
	w.status = code
	clear(w.sent)
	w.header, w.sent = w.sent, w.header
	if v := w.sent["Content-Length"]; len(v) > 0 {
		n, err := strconv.ParseUint(textproto.TrimString(v[0]), 10, 63)
		if err != nil || len(v) > 1 {
			delete(w.sent, "Content-Length") // net/http ignores it too, with a log line
		} else {
			w.declared = int64(n)
		}
	}
}

// Write keeps b, or refuses it past the Content-Length the handler set, as
// net/http does.
func (w *laneWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	w.written += int64(len(b))
	if w.declared >= 0 && w.written > w.declared {
		return 0, http.ErrContentLength
	}
	w.body = append(w.body, b...)
	return len(b), nil
}

func bodyAllowed(status int) bool {
	return !(status >= 100 && status <= 199) && status != http.StatusNoContent && status != http.StatusNotModified
}

// appendAnswer writes the answer's status line and headers into w.out, as
// net/http writes them: the handler's headers sorted by name, then the Date,
// a Content-Length for a body the handler did not give one, a sniffed
// Content-Type, and Connection: close when the connection closes after it.
// body is what follows the headers (nil when it is in out, or for HEAD).
// closeAfter is true also when the handler asked for the close, or wrote
// other than the Content-Length it set (the client could not tell where
// this answer ends).
func (w *laneWriter) appendAnswer(closeAfter bool) (out, body []byte, _ bool) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	status := w.status
	h := w.sent
	if !bodyAllowed(status) {
		delete(h, "Content-Length")
		delete(h, "Transfer-Encoding")
		if status == http.StatusNotModified {
			delete(h, "Content-Type")
		}
	} else if !w.head && w.declared >= 0 && w.written != w.declared {
		closeAfter = true
	}
	handlerClose := hasCloseToken(h)
	if handlerClose {
		closeAfter = true
	} else if closeAfter {
		delete(h, "Connection")
	}
	out = append(w.out[:0], "HTTP/1.1 "...)
	out = strconv.AppendInt(out, int64(status), 10)
	out = append(out, ' ')
	if text := http.StatusText(status); text != "" {
		out = append(out, text...)
	} else {
		out = append(out, "status code "...)
		out = strconv.AppendInt(out, int64(status), 10)
	}
	out = append(out, "\r\n"...)
	w.keys = w.keys[:0]
	for k := range h {
		w.keys = append(w.keys, k)
	}
	slices.Sort(w.keys)
	for _, k := range w.keys {
		if !httpguts.ValidHeaderFieldName(k) {
			continue // net/http drops it too
		}
		for _, v := range h[k] {
			out = append(out, k...)
			out = append(out, ": "...)
			out = appendFieldValue(out, v)
			out = append(out, "\r\n"...)
		}
	}
	_, haveType := h["Content-Type"]
	if bodyAllowed(status) && !haveType && h.Get("Content-Encoding") == "" && len(w.body) > 0 {
		out = append(out, "Content-Type: "...)
		out = append(out, http.DetectContentType(w.body)...)
		out = append(out, "\r\n"...)
	}
	if closeAfter && !handlerClose {
		out = append(out, "Connection: close\r\n"...)
	}
	if _, ok := h["Date"]; !ok {
		out = append(out, "Date: "...)
		out = appendDate(out)
		out = append(out, "\r\n"...)
	}
	if _, ok := h["Content-Length"]; !ok && bodyAllowed(status) && (!w.head || len(w.body) > 0) {
		out = append(out, "Content-Length: "...)
		out = strconv.AppendInt(out, int64(len(w.body)), 10)
		out = append(out, "\r\n"...)
	}
	out = append(out, "\r\n"...)
	if !w.head && bodyAllowed(status) {
		if len(w.body) <= 2<<10 {
			out = append(out, w.body...) // one buffer: cheaper than a writev of two
		} else {
			body = w.body
		}
	}
	w.out = out
	return out, body, closeAfter
}

func hasCloseToken(h http.Header) bool {
	for _, v := range h["Connection"] {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "close") {
				return true
			}
		}
	}
	return false
}

// appendFieldValue appends v as net/http writes a header value: CR and LF as
// spaces, trimmed of spaces and tabs.
func appendFieldValue(out []byte, v string) []byte {
	plain := len(v) == 0 || (v[0] != ' ' && v[0] != '\t' && v[len(v)-1] != ' ' && v[len(v)-1] != '\t')
	for i := 0; plain && i < len(v); i++ {
		plain = v[i] != '\r' && v[i] != '\n'
	}
	if plain {
		return append(out, v...)
	}
	v = strings.NewReplacer("\n", " ", "\r", " ").Replace(v)
	return append(out, textproto.TrimString(v)...)
}

// laneDate is the Date header's value, formatted once a second.
var laneDate atomic.Pointer[dateValue]

type dateValue struct {
	sec int64
	b   []byte
}

func appendDate(out []byte) []byte {
	now := time.Now()
	d := laneDate.Load()
	if d == nil || d.sec != now.Unix() {
		d = &dateValue{sec: now.Unix(), b: now.UTC().AppendFormat(nil, http.TimeFormat)}
		laneDate.Store(d)
	}
	return append(out, d.b...)
}
