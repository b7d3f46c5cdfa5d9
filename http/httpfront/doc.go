// Package httpfront is the HTTP/1.1 server in front of pds serve's REST
// handler. It accepts the connections, holds them to their limits, answers
// plain GET and HEAD requests itself (the lane), and hands every other
// request, with the rest of its connection, to net/http. Both paths run the
// same http.Handler; httpfront knows nothing of what it answers.
//
// # The subset the lane answers
//
// A request is plain, and answered by the lane, when its head
//
//   - starts with "GET /" or "HEAD /" (origin form), and its request line is
//     method, one space, target, one space, "HTTP/1.1";
//   - has a target that is not under /v1/mcp (whose GET streams events),
//     also once decoded, and that url.ParseRequestURI takes;
//   - ends every line in CRLF (no bare CR or LF, no folded line), and fits
//     in 4 KiB (laneBufSize);
//   - has header names of token characters and values without control
//     bytes but HTAB;
//   - has exactly one Host, valid as net/http judges it;
//   - has no Content-Length, Transfer-Encoding, Expect, Upgrade or Trailer
//     (so no body), and a Connection that is, if present, "keep-alive" or
//     "close".
//
// Anything else, from the first byte that makes it so, goes to net/http
// with every byte read: a POST, HTTP/1.0, an absolute-form target, a long
// head, a malformed one (which gets net/http's own 400 or 431), and a head
// cut short by the client's half-close (net/http's 400). net/http then
// serves the rest of that connection. FuzzLaneHead checks that every head
// the lane takes, http.ReadRequest takes too, to the same byte and into the
// same request; FuzzLaneHeadInPieces that a head judged in pieces, as it
// arrives, gets the verdict it gets whole.
//
// The lane builds the http.Request net/http would build (URL, Host,
// canonical header names, the Pragma: no-cache rule) and writes the answer
// under net/http's rules for handlers (headers set after WriteHeader are not
// sent, a write past the declared Content-Length is refused, an answer
// shorter than it closes the connection), in one system call once the
// handler returns. It differs from net/http in two ways: a request's context
// is not cancelled when its client goes away, and an answer is held whole,
// so a body past 2 KiB gets a Content-Length where net/http would chunk it.
//
// # Connections and their limits
//
// Both paths share one account of the open connections (table). At most
// MaxConns are open. At the cap, the idle connection least recently used,
// one waiting for the first byte of a request, its first or a next, on
// either path, is closed to admit the new one, as net/http closes an idle
// keep-alive connection; with none idle, the new one is answered 503 with
// Retry-After and closed. One client address (an IPv4 address, an IPv6 /64)
// holds at most AddrShare of the cap; one more from it is answered 503.
// A connection that has sent nothing yet has the header timeout from its
// start, on both paths (net/http's own rule); an idle one after an answer
// has the idle timeout.
//
// # Why it is written here
//
// net/http has no setting for what the lane saves a request: the context
// with its cancel function and the goroutine that watches the connection
// for a close, the deadlines moved on every request (the lane moves one only
// when it would fall short of its timeout by more than a tenth), the
// buffered reader and writer, and the sorting of the header keys through a
// pool. fasthttp, the maintained fast server, has request and handler types
// of its own: pds's handlers would run under its adaptor, which builds an
// http.Request for every request anyway, and it cannot hand a connection to
// net/http for the MCP stream and the request bodies. For the limits,
// golang.org/x/net/netutil.LimitListener leaves a connection past its cap
// waiting unanswered in the kernel's backlog and closes no idle one, and
// net/http has no per-address limit and closes idle connections only when
// it shuts down.
package httpfront
