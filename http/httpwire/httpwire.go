package httpwire

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/productdata/pds/domain"
)

// CodeInfo is what the wire shows of an error code.
type CodeInfo struct {
	Status    int
	Retryable bool
	Title     string
}

// codes maps every code of domain to its HTTP status, whether the caller may
// retry the same call, and the Problem's title. Only RATE_LIMITED,
// SERVICE_UNAVAILABLE and INTERNAL_ERROR are retryable.
var codes = map[string]CodeInfo{
	domain.CodeUnauthenticated:            {http.StatusUnauthorized, false, "Unauthenticated"},
	domain.CodeForbidden:                  {http.StatusForbidden, false, "Forbidden"},
	domain.CodeTenantQuotaExceeded:        {http.StatusTooManyRequests, false, "Tenant quota exceeded"},
	domain.CodeRateLimited:                {http.StatusTooManyRequests, true, "Rate limited"},
	domain.CodeBatchTooLarge:              {http.StatusBadRequest, false, "Batch too large"},
	domain.CodeInvalidIdentifier:          {http.StatusBadRequest, false, "Invalid identifier"},
	domain.CodeInvalidFilter:              {http.StatusBadRequest, false, "Invalid filter"},
	domain.CodeUnsupportedFilter:          {http.StatusBadRequest, false, "Unsupported filter"},
	domain.CodeInvalidSort:                {http.StatusBadRequest, false, "Invalid sort"},
	domain.CodeInvalidCursor:              {http.StatusBadRequest, false, "Invalid cursor"},
	domain.CodeMalformedURI:               {http.StatusBadRequest, false, "Malformed URI"},
	domain.CodeUnsupportedURIForm:         {http.StatusBadRequest, false, "Unsupported URI form"},
	domain.CodeNoPrimaryIdentifier:        {http.StatusBadRequest, false, "No primary identifier"},
	domain.CodeUnsupportedNamespace:       {http.StatusBadRequest, false, "Unsupported namespace"},
	domain.CodeUnsupportedProtocolVersion: {http.StatusBadRequest, false, "Unsupported protocol version"},
	domain.CodeInvalidRequest:             {http.StatusBadRequest, false, "Invalid request"},
	domain.CodePayloadTooLarge:            {http.StatusRequestEntityTooLarge, false, "Payload too large"},
	domain.CodeRequestHeadersTooLarge:     {http.StatusRequestHeaderFieldsTooLarge, false, "Request headers too large"},
	domain.CodeUnsupportedMediaType:       {http.StatusUnsupportedMediaType, false, "Unsupported media type"},
	domain.CodeMethodNotAllowed:           {http.StatusMethodNotAllowed, false, "Method not allowed"},
	domain.CodeRouteNotFound:              {http.StatusNotFound, false, "Route not found"},
	domain.CodeServiceUnavailable:         {http.StatusServiceUnavailable, true, "Service unavailable"},
	domain.CodeInternal:                   {http.StatusInternalServerError, true, "Internal error"},
}

// Info returns the wire facts of a code; an unknown code is an internal error.
func Info(code string) CodeInfo {
	if ci, ok := codes[code]; ok {
		return ci
	}
	return codes[domain.CodeInternal]
}

// MaxDetail is the longest Problem detail (spec 2.7).
const MaxDetail = 512

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

// ProblemDocs is the page that describes every error code, one section per
// code: docs/problems.md in the repository the module path names. A
// Problem's type and docs_url are this page with the code's anchor (GitHub
// makes a heading's anchor of its text in lower case).
const ProblemDocs = "https://github.com/productdata/pds/blob/main/docs/problems.md"

// ProblemType returns the type URI (and docs_url) of a code.
func ProblemType(code string) string { return ProblemDocs + "#" + strings.ToLower(code) }

// NewProblem builds the Problem for an error.
func NewProblem(e *domain.Error, requestID string) Problem {
	code := e.Code
	if _, ok := codes[code]; !ok {
		code = domain.CodeInternal
	}
	ci := codes[code]
	detail := e.Detail
	if len(detail) > MaxDetail {
		detail = detail[:MaxDetail-3] + "..."
	}
	return Problem{
		Type:      ProblemType(code),
		Title:     ci.Title,
		Status:    ci.Status,
		Code:      code,
		Detail:    detail,
		RequestID: requestID,
		Retryable: ci.Retryable,
		DocsURL:   ProblemType(code),
	}
}

// methodError is METHOD_NOT_ALLOWED with the methods the Allow header lists.
type methodError struct {
	err   *domain.Error
	allow string
}

func (e *methodError) Error() string { return e.err.Error() }
func (e *methodError) Unwrap() error { return e.err }

// MethodNotAllowed refuses a method; allow lists the methods allowed
// ("GET", or "GET, POST"), sent in the Allow header.
func MethodNotAllowed(allow, detail string) error {
	return &methodError{err: &domain.Error{Code: domain.CodeMethodNotAllowed, Detail: detail}, allow: allow}
}

// SetProblemHeaders sets the headers that the problem for err carries:
// X-Content-Type-Options: nosniff on every one (a browser shown a problem
// reads it as JSON, never as a page, whatever its detail quotes),
// WWW-Authenticate on UNAUTHENTICATED, Allow on METHOD_NOT_ALLOWED, and
// Retry-After (the error's RetryAfter, at least one second) on every 429
// and 503.
func SetProblemHeaders(h http.Header, err error) {
	h["X-Content-Type-Options"] = nosniff
	de := domain.AsError(err)
	switch de.Code {
	case domain.CodeUnauthenticated:
		h.Set("WWW-Authenticate", `Bearer realm="pds"`)
	case domain.CodeMethodNotAllowed:
		var me *methodError
		if errors.As(err, &me) && me.allow != "" {
			h.Set("Allow", me.allow)
		}
	}
	if s := Info(de.Code).Status; s == http.StatusTooManyRequests || s == http.StatusServiceUnavailable {
		h.Set("Retry-After", strconv.Itoa(max(de.RetryAfter, 1)))
	}
}

var nosniff = []string{"nosniff"}

// MaxBody is the largest request body read (a resolve call with 1000
// identifiers of 256 characters fits with room to spare).
const MaxBody = 1 << 20

// ReadBody reads the whole request body: PAYLOAD_TOO_LARGE past MaxBody,
// INVALID_REQUEST when it cannot be read.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, domain.Errorf(domain.CodePayloadTooLarge, "the body is larger than %d bytes", MaxBody)
		}
		return nil, domain.Errorf(domain.CodeInvalidRequest, "the body could not be read")
	}
	return body, nil
}

// MaxHead is the largest request head answered: the request line and the
// header lines, each with its CRLF, and the blank line that ends them (as
// HeadSize counts them).
const MaxHead = 16 << 10

// HeadSize is the size of r's head as HTTP/1.1 sends it: the request line,
// the Host line and every header line, each with its CRLF, and the blank
// line that ends the head. Spaces around a header's value and a folded
// line's break, which the server drops as it reads, are not counted.
func HeadSize(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	if r.Host != "" {
		n += len("Host: ") + len(r.Host) + 2
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + 2 + len(v) + 2
		}
	}
	return n + 2
}

// CheckHead refuses a head over MaxHead with REQUEST_HEADERS_TOO_LARGE.
func CheckHead(r *http.Request) error {
	if n := HeadSize(r); n > MaxHead {
		return domain.Errorf(domain.CodeRequestHeadersTooLarge,
			"the request line and headers are %d bytes, over the limit of %d; send fewer or shorter headers", n, MaxHead)
	}
	return nil
}

// LimitSource says where a caller stands against its key's limits; ok is
// false for an unlimited key (the service does).
type LimitSource interface {
	Limits(c domain.Caller) (lim domain.Limits, ok bool)
}

// SetRateLimit sets the caller's RateLimit-Limit, RateLimit-Remaining and
// RateLimit-Reset headers as they stand now; an unlimited key gets none.
func SetRateLimit(h http.Header, src LimitSource, c domain.Caller) {
	lim, ok := src.Limits(c)
	if !ok {
		return
	}
	h.Set("RateLimit-Limit", strconv.FormatInt(lim.Limit, 10))
	h.Set("RateLimit-Remaining", strconv.FormatInt(lim.Remaining, 10))
	h.Set("RateLimit-Reset", strconv.FormatInt(lim.Reset, 10))
}
