package domain

import (
	"errors"
	"fmt"
	"slices"
)

// Error codes (spec 7.2, and the codes pds adds: FORBIDDEN, INVALID_REQUEST,
// PAYLOAD_TOO_LARGE, REQUEST_HEADERS_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE,
// METHOD_NOT_ALLOWED, ROUTE_NOT_FOUND, SERVICE_UNAVAILABLE). Their HTTP form
// is in httpwire.
const (
	CodeUnauthenticated            = "UNAUTHENTICATED"
	CodeForbidden                  = "FORBIDDEN"
	CodeTenantQuotaExceeded        = "TENANT_QUOTA_EXCEEDED"
	CodeRateLimited                = "RATE_LIMITED"
	CodeBatchTooLarge              = "BATCH_TOO_LARGE"
	CodeInvalidIdentifier          = "INVALID_IDENTIFIER"
	CodeInvalidFilter              = "INVALID_FILTER"
	CodeUnsupportedFilter          = "UNSUPPORTED_FILTER"
	CodeInvalidSort                = "INVALID_SORT"
	CodeInvalidCursor              = "INVALID_CURSOR"
	CodeMalformedURI               = "MALFORMED_URI"
	CodeUnsupportedURIForm         = "UNSUPPORTED_URI_FORM"
	CodeNoPrimaryIdentifier        = "NO_PRIMARY_IDENTIFIER"
	CodeUnsupportedNamespace       = "UNSUPPORTED_NAMESPACE"
	CodeUnsupportedProtocolVersion = "UNSUPPORTED_PROTOCOL_VERSION"
	CodeInvalidRequest             = "INVALID_REQUEST"
	CodePayloadTooLarge            = "PAYLOAD_TOO_LARGE"
	CodeRequestHeadersTooLarge     = "REQUEST_HEADERS_TOO_LARGE"
	CodeUnsupportedMediaType       = "UNSUPPORTED_MEDIA_TYPE"
	CodeMethodNotAllowed           = "METHOD_NOT_ALLOWED"
	CodeRouteNotFound              = "ROUTE_NOT_FOUND"
	CodeServiceUnavailable         = "SERVICE_UNAVAILABLE"
	CodeInternal                   = "INTERNAL_ERROR"
)

// codes lists every code above.
var codes = []string{
	CodeUnauthenticated, CodeForbidden, CodeTenantQuotaExceeded, CodeRateLimited, CodeBatchTooLarge,
	CodeInvalidIdentifier, CodeInvalidFilter, CodeUnsupportedFilter, CodeInvalidSort, CodeInvalidCursor,
	CodeMalformedURI, CodeUnsupportedURIForm, CodeNoPrimaryIdentifier, CodeUnsupportedNamespace,
	CodeUnsupportedProtocolVersion, CodeInvalidRequest, CodePayloadTooLarge, CodeRequestHeadersTooLarge, CodeUnsupportedMediaType,
	CodeMethodNotAllowed, CodeRouteNotFound, CodeServiceUnavailable, CodeInternal,
}

// Codes lists every known error code.
func Codes() []string { return slices.Clone(codes) }

// Error is the one error type operations return to transports. Code is one of
// the codes above; Detail is safe to show the caller. Err, when set, is the
// underlying cause: it is logged, never shown.
type Error struct {
	Code   string
	Detail string
	Err    error
	// RetryAfter is how many seconds a refused call (quota, rate limit,
	// unavailable) should wait before it is tried again.
	RetryAfter int
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Detail, e.Err)
	}
	return e.Code + ": " + e.Detail
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with a formatted detail.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// ErrDamaged is wrapped by every read that found a file of the snapshot
// changed since it was opened, or its bytes not the snapshot's (a checksum
// that does not match, a file cut short under a mapping). Such a read is
// no internal error but a snapshot to be replaced: callers hear
// SERVICE_UNAVAILABLE and may retry.
var ErrDamaged = errors.New("the snapshot's files changed or are damaged")

// damagedRetry is the Retry-After of an answer refused for a damaged
// snapshot: the server checks for a good one every few seconds.
const damagedRetry = 5

// Internal wraps an unexpected failure; its cause is never shown to callers.
// A failure that wraps ErrDamaged is SERVICE_UNAVAILABLE instead.
func Internal(err error) *Error {
	if errors.Is(err, ErrDamaged) {
		return &Error{Code: CodeServiceUnavailable, RetryAfter: damagedRetry, Err: err,
			Detail: "the snapshot's files changed under the server or are damaged; answers resume once a good snapshot is in place"}
	}
	return &Error{Code: CodeInternal, Detail: "an unexpected error occurred; it has been logged", Err: err}
}

// AsError returns err as an *Error, wrapping anything else as internal.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal(err)
}
