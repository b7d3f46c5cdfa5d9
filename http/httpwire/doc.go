// Package httpwire holds what the REST and MCP transports both put on, and
// take off, the HTTP wire: the HTTP status, retryability and title of each
// error code, the Problem (RFC 9457) built from an error, the headers a
// problem carries (WWW-Authenticate, Allow, Retry-After), the size-limited
// request body reader, and the RateLimit-* headers. domain says what went
// wrong; this package says how HTTP shows it, once for both transports.
//
// It owns no route, no handler and no operation: it knows domain's errors
// and net/http, nothing of service, the stores or either transport's routes.
package httpwire
