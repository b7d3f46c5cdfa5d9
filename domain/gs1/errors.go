package gs1

import (
	"strconv"
	"unicode/utf8"
)

// Error codes returned by the parsers in an *Error.
const (
	CodeUnsupportedNamespace = "UNSUPPORTED_NAMESPACE"
	CodeMalformedURI         = "MALFORMED_URI"
	CodeUnsupportedURIForm   = "UNSUPPORTED_URI_FORM"
	CodeNoPrimaryIdentifier  = "NO_PRIMARY_IDENTIFIER"
	CodeInvalidIdentifier    = "INVALID_IDENTIFIER"
	CodeInvalidRequest       = "INVALID_REQUEST"
)

// maxDetail is the longest Detail an Error carries (the Problem limit).
const maxDetail = 512

// Error is returned by the parsers. Code is one of the Code* constants;
// Detail says what is wrong in words a caller can act on, at most 512 bytes.
type Error struct {
	Code   string
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Code
	}
	return e.Code + ": " + e.Detail
}

func newError(code, detail string) *Error {
	return &Error{Code: code, Detail: clip(detail, maxDetail)}
}

// clip shortens s to at most n bytes without splitting a UTF-8 sequence,
// marking the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// quote renders a caller's value for a detail message: Go-quoted (so control
// characters and odd bytes are visible) and shortened to stay readable.
func quote(s string) string {
	const max = 64
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}
