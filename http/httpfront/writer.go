package httpfront

import (
	"fmt"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

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
