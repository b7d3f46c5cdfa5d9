package httpfront

import (
	"bytes"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"
)

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
// it against http.ReadRequest; FuzzLaneHeadInPieces that its prefixes get
// the same verdict), and says headNotPlain for anything else, which
// net/http then answers as it always has, a malformed request with its 400.
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
	if !ok || string(proto) != "HTTP/1.1" || !validFieldValue(target) || bytes.IndexByte(target, '\t') >= 0 {
		return 0, headNotPlain // a control byte in the target (net/url refuses one): net/http's 400
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

// buildRequest builds the http.Request net/http would build from a plain head:
// the same URL, Host, canonical header names, and Cache-Control for a
// Pragma: no-cache. header is reused, cleared, by every request of the
// connection. ok is false where net/http would refuse the target.
func buildRequest(base *http.Request, h *laneHead, header http.Header, remote string) (*http.Request, bool) {
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
