package gs1

import (
	"net/netip"
	"strconv"
	"strings"
)

// maxURILength is the longest Digital Link URI pds reads.
const maxURILength = 4096

// rawURI is an absolute URI split into its parts, as written (nothing
// decoded). Offsets let the stem be cut from the original string.
type rawURI struct {
	scheme    string // as written
	authority string
	pathStart int // offset of path in the original string
	path      string
	query     string
	hasQuery  bool
}

// uriChar marks the ASCII characters RFC 3986 allows anywhere in a URI
// (unreserved, reserved and '%'); '[' and ']' are further limited to the
// host.
var uriChar [128]bool

func init() {
	for c := 'a'; c <= 'z'; c++ {
		uriChar[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		uriChar[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		uriChar[c] = true
	}
	for _, c := range []byte("-._~:/?#[]@!$&'()*+,;=%") {
		uriChar[c] = true
	}
	plainURIChar = uriChar
	for _, c := range []byte("%#[]") {
		plainURIChar[c] = false
	}
}

// plainURIChar is uriChar without the characters splitURI looks at closely.
var plainURIChar [128]bool

func malformed(detail string) *Error { return newError(CodeMalformedURI, detail) }

// splitURI checks s is an absolute RFC 3986 URI made only of ASCII URI
// characters with well-formed % escapes, and splits it. Host checks for
// http(s) are left to checkAuthority.
func splitURI(s string) (rawURI, *Error) {
	var u rawURI
	if s == "" {
		return u, malformed("the URI is empty")
	}
	if len(s) > maxURILength {
		return u, malformed("the URI is " + strconv.Itoa(len(s)) + " characters long; the limit is " + strconv.Itoa(maxURILength))
	}
	fragment := -1
	firstBracket := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 && plainURIChar[c] {
			continue
		}
		switch {
		case c == ' ':
			return u, malformed("raw space at position " + strconv.Itoa(i+1) + "; percent-encode it as %20")
		case c < 0x20 || c == 0x7f:
			return u, malformed("control character 0x" + strconv.FormatUint(uint64(c), 16) + " at position " + strconv.Itoa(i+1))
		case c >= 0x80:
			return u, malformed("non-ASCII character at position " + strconv.Itoa(i+1) + "; percent-encode its UTF-8 bytes")
		case !uriChar[c]:
			return u, malformed("character " + strconv.QuoteRune(rune(c)) + " at position " + strconv.Itoa(i+1) + " is not allowed in a URI; percent-encode it as %" + hexByte(c))
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return u, malformed("bad percent escape at position " + strconv.Itoa(i+1) + "; % must be followed by two hex digits")
			}
		case c == '#':
			if fragment >= 0 {
				return u, malformed("second '#' at position " + strconv.Itoa(i+1) + "; it is not allowed in a fragment")
			}
			fragment = i
		case c == '[' || c == ']':
			if firstBracket < 0 {
				firstBracket = i
			}
		}
	}
	// Scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":".
	colon := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ':' {
			colon = i
			break
		}
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			break
		}
	}
	if colon <= 0 {
		return u, malformed("not an absolute URI: it does not start with a scheme such as https:")
	}
	u.scheme = s[:colon]
	end := len(s)
	if fragment >= 0 {
		end = fragment
	}
	rest := s[colon+1 : end]
	pos := colon + 1
	if len(rest) >= 2 && rest[0] == '/' && rest[1] == '/' {
		a := 2
		for a < len(rest) && rest[a] != '/' && rest[a] != '?' {
			a++
		}
		u.authority = rest[2:a]
		rest = rest[a:]
		pos += a
	}
	u.pathStart = pos
	u.path = rest
	if q := indexByte(rest, '?'); q >= 0 {
		u.path = rest[:q]
		u.query = rest[q+1:]
		u.hasQuery = true
	}
	// '[' and ']' belong only to an IP literal host.
	for i := max(firstBracket, colon+1); firstBracket >= 0 && i < len(s); i++ {
		if (s[i] == '[' || s[i] == ']') && (i < colon+3 || i >= u.pathStart) {
			return u, malformed("character " + strconv.QuoteRune(rune(s[i])) + " at position " + strconv.Itoa(i+1) + " is only allowed around an IPv6 host")
		}
	}
	return u, nil
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func hexByte(c byte) string {
	const hex = "0123456789ABCDEF"
	return string([]byte{hex[c>>4], hex[c&15]})
}

// checkAuthority checks the authority of an http(s) URI: a DNS name, an
// IPv4 address or a bracketed IPv6 literal, with an optional port, and no
// user information.
func checkAuthority(a string) *Error {
	if a == "" {
		return malformed("the host is empty")
	}
	if indexByte(a, '@') >= 0 {
		return malformed("user information (user@) is not allowed before the host")
	}
	host, port := a, ""
	hasPort := false
	if a[0] == '[' {
		end := indexByte(a, ']')
		if end < 0 {
			return malformed("unclosed '[' in the host")
		}
		host = a[:end+1]
		rest := a[end+1:]
		if rest != "" {
			if rest[0] != ':' {
				return malformed("unexpected characters after the IPv6 host")
			}
			port, hasPort = rest[1:], true
		}
		lit := host[1 : len(host)-1]
		addr, err := netip.ParseAddr(lit)
		if err != nil || !addr.Is6() || addr.Zone() != "" || indexByte(lit, '%') >= 0 {
			return malformed("the host " + quote(host) + " is not an IPv6 address")
		}
	} else {
		if c := indexByte(a, ':'); c >= 0 {
			host, port, hasPort = a[:c], a[c+1:], true
		}
		if msg := checkHostName(host); msg != "" {
			return malformed(msg)
		}
	}
	if hasPort && port != "" {
		if !isDigits(port) || len(port) > 5 || num(port) > 65535 {
			return malformed("the port " + quote(port) + " is not a number from 0 to 65535")
		}
	}
	return nil
}

// checkHostName checks a DNS name or a dotted IPv4 address and says what is
// wrong, or "".
func checkHostName(h string) string {
	if h == "" {
		return "the host is empty"
	}
	numeric := true
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return "character " + strconv.QuoteRune(rune(c)) + " is not allowed in the host " + quote(h)
		}
		if c != '.' && (c < '0' || c > '9') {
			numeric = false
		}
	}
	if numeric {
		addr, err := netip.ParseAddr(h)
		if err != nil || !addr.Is4() {
			return "the host " + quote(h) + " is not an IPv4 address"
		}
		return ""
	}
	name := h
	if name[len(name)-1] == '.' {
		name = name[:len(name)-1] // a fully qualified name
	}
	if len(name) > 253 {
		return "the host name is longer than 253 characters"
	}
	start := 0
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '.' {
			continue
		}
		label := name[start:i]
		switch {
		case label == "":
			return "the host " + quote(h) + " has an empty label"
		case len(label) > 63:
			return "a label of the host is longer than 63 characters"
		case label[0] == '-' || label[len(label)-1] == '-':
			return "a label of the host " + quote(h) + " starts or ends with '-'"
		}
		start = i + 1
	}
	return ""
}

// unescape decodes %XX escapes (already checked well formed) and, when
// plusIsSpace (query parts), '+' as a space. It returns s itself when there
// is nothing to decode.
func unescape(s string, plusIsSpace bool) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || plusIsSpace && s[i] == '+' {
			n++
		}
	}
	if n == 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		case c == '+' && plusIsSpace:
			b = append(b, ' ')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

// unreservedByte reports whether c is in the RFC 3986 unreserved set.
func unreservedByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// writeEscaped writes s percent-encoding every byte outside the RFC 3986
// unreserved set, for the canonical URI.
func writeEscaped(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreservedByte(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
}

// escapedExtra counts the bytes percent-encoding adds to the values.
func escapedExtra(elems []element) int {
	n := 0
	for _, e := range elems {
		for i := 0; i < len(e.value); i++ {
			if !unreservedByte(e.value[i]) {
				n += 2
			}
		}
	}
	return n
}
