package domain

import (
	"errors"
	"fmt"
)

// Error codes (spec 7.2 and decisions section 4).
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
	CodeUnsupportedMediaType       = "UNSUPPORTED_MEDIA_TYPE"
	CodeMethodNotAllowed           = "METHOD_NOT_ALLOWED"
	CodeRouteNotFound              = "ROUTE_NOT_FOUND"
	CodeServiceUnavailable         = "SERVICE_UNAVAILABLE"
	CodeInternal                   = "INTERNAL_ERROR"
)

// CodeInfo is what the wire needs to know about a code.
type CodeInfo struct {
	Status    int
	Retryable bool
	Title     string
}

var codes = map[string]CodeInfo{
	CodeUnauthenticated:            {401, false, "Unauthenticated"},
	CodeForbidden:                  {403, false, "Forbidden"},
	CodeTenantQuotaExceeded:        {429, false, "Tenant quota exceeded"},
	CodeRateLimited:                {429, true, "Rate limited"},
	CodeBatchTooLarge:              {400, false, "Batch too large"},
	CodeInvalidIdentifier:          {400, false, "Invalid identifier"},
	CodeInvalidFilter:              {400, false, "Invalid filter"},
	CodeUnsupportedFilter:          {400, false, "Unsupported filter"},
	CodeInvalidSort:                {400, false, "Invalid sort"},
	CodeInvalidCursor:              {400, false, "Invalid cursor"},
	CodeMalformedURI:               {400, false, "Malformed URI"},
	CodeUnsupportedURIForm:         {400, false, "Unsupported URI form"},
	CodeNoPrimaryIdentifier:        {400, false, "No primary identifier"},
	CodeUnsupportedNamespace:       {400, false, "Unsupported namespace"},
	CodeUnsupportedProtocolVersion: {400, false, "Unsupported protocol version"},
	CodeInvalidRequest:             {400, false, "Invalid request"},
	CodePayloadTooLarge:            {413, false, "Payload too large"},
	CodeUnsupportedMediaType:       {415, false, "Unsupported media type"},
	CodeMethodNotAllowed:           {405, false, "Method not allowed"},
	CodeRouteNotFound:              {404, false, "Route not found"},
	CodeServiceUnavailable:         {503, true, "Service unavailable"},
	CodeInternal:                   {500, true, "Internal error"},
}

// Info returns the wire facts of a code; an unknown code is an internal error.
func Info(code string) CodeInfo {
	if ci, ok := codes[code]; ok {
		return ci
	}
	return codes[CodeInternal]
}

// Codes lists every known error code.
func Codes() []string {
	out := make([]string, 0, len(codes))
	for c := range codes {
		out = append(out, c)
	}
	return out
}

// MaxDetail is the longest Problem detail (spec 2.7).
const MaxDetail = 512

// Error is the one error type operations return to transports. Code is one of
// the codes above; Detail is safe to show the caller. Err, when set, is the
// underlying cause: it is logged, never shown.
type Error struct {
	Code   string
	Detail string
	Err    error
	// RetryAfter, in seconds, for codes that carry a Retry-After header.
	RetryAfter int
	// Allow lists the allowed methods for CodeMethodNotAllowed.
	Allow string
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

// Internal wraps an unexpected failure; its cause is never shown to callers.
func Internal(err error) *Error {
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

// Problem is the wire form of an error (spec 2.7, RFC 9457).
type Problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Code      string `json:"code"`
	Detail    string `json:"detail,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	Retryable bool   `json:"retryable"`
	DocsURL   string `json:"docs_url,omitempty"`
}

// ProblemTypeBase prefixes a code to make a Problem type URI.
const ProblemTypeBase = "https://pds.productdata.dev/problems/"

// NewProblem builds the Problem for an error.
func NewProblem(e *Error, requestID string) Problem {
	ci := Info(e.Code)
	code := e.Code
	if _, ok := codes[code]; !ok {
		code = CodeInternal
	}
	detail := e.Detail
	if len(detail) > MaxDetail {
		detail = detail[:MaxDetail-3] + "..."
	}
	return Problem{
		Type:      ProblemTypeBase + code,
		Title:     ci.Title,
		Status:    ci.Status,
		Code:      code,
		Detail:    detail,
		RequestID: requestID,
		Retryable: ci.Retryable,
	}
}
