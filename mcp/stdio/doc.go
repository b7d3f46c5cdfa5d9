// Package stdio is the transport pds mcp serves the official Go MCP SDK's
// server on: newline-delimited JSON-RPC 2.0 on standard input and output,
// one message a line, as the MCP stdio transport says.
//
// # Why it is written here
//
// The SDK has a stdio transport (mcp.StdioTransport, mcp.IOTransport), but
// it does not follow JSON-RPC 2.0 where a client errs:
//
//   - A line that is not JSON, or not a valid Request, is a read error to
//     it, and a read error ends the session: no -32700 or -32600 answer, the
//     requests already read never answered, exit status 1. (A byte order
//     mark, trailing data, null, [], "jsonrpc":"1.0", an id that is an
//     object or a boolean, nesting deeper than encoding/json reads: each
//     ends the process.)
//   - Its request ids hold a string or an int64, so a number id such as 1.5,
//     1e2, 1e999 or one of 400 digits is answered under another id (1.5 as
//     1) or refused, and two such ids can collide, which leaves a request
//     unanswered and the process waiting at the end of input.
//   - It reads a JSON array as a batch, which MCP removed in 2025-06-18.
//   - It ends the session at the end of input at once, leaving requests
//     already read unanswered.
//
// None of it can be configured, and the reader is not replaceable inside
// the SDK, so this package is a Transport of its own (the SDK's Transport
// and Connection interfaces, about 400 lines), and the SDK's server runs on
// it unchanged. It owns the framing and the ids only: it knows nothing of
// pds's tools, the service or the HTTP transport.
//
// # Basics
//
// Each line is checked here before the SDK sees it (parseLine):
//
//   - not UTF-8, a byte order mark, not one JSON value (trailing data, too
//     deep) → -32700, id null;
//   - a JSON array (a batch) → -32600, id null: MCP's messages are single
//     requests, notifications or responses, never arrays;
//   - a JSON value that is not a Request object: not an object, jsonrpc not
//     the string "2.0", method not a string, id null or not a string or a
//     number, params not an object or array, a member twice, no method and
//     no result or error → -32600, with the id when it was read and valid,
//     else null;
//   - an id already used by a request not yet answered → -32600, id null.
//
// Every error is answered at once and the session goes on. A valid request
// reaches the SDK under an id of this package's own (a counter), and its
// answer goes out under the id exactly as the client wrote it, byte for
// byte: a string as written, a number as written (1.5 stays 1.5, 1e2 stays
// 1e2, 400 digits stay 400 digits); the SDK never reads the client's id. A
// notifications/cancelled naming a pending request is translated the same
// way. At the end of input the session ends once every request read has
// been answered (or after DrainTimeout), so printf '...' | pds mcp gets
// every answer, and the process exits 0.
//
// # Caveats
//
// A line longer than MaxLine is answered -32600 and skipped. Responses from
// the client (to requests of the server, which revisions before 2026-07-28
// allow) are passed to the SDK when their id is a string or an integer; pds's
// server sends no requests, so it drops them.
package stdio
