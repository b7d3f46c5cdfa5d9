// Package mcp is the MCP endpoint of pds (POST /v1/mcp): the stateless
// Streamable HTTP transport of MCP revision 2026-07-28, tools feature only.
//
// Methods: server/discover, tools/list and tools/call. Every tool runs one
// service operation, the same function the REST handler calls, and a
// successful call's structuredContent is exactly the REST envelope. Nothing
// here reads the snapshot or implements an operation.
//
// A request is checked in this fixed order, and the first failing check
// answers; a later check never runs before an earlier one has passed:
//
//  1. not POST: 405 with Allow: POST (problem+json)
//  2. an Origin that is neither loopback nor configured: 403 (problem+json)
//  3. no valid bearer key: 401 with WWW-Authenticate (problem+json);
//     a key without the mcp scope: 403 (problem+json)
//  4. body over 1 MiB: 413 (problem+json)
//  5. body not JSON: 400, -32700
//  6. not a single JSON-RPC 2.0 request: 400, -32600
//  7. a notification: 202, empty body
//  8. MCP-Protocol-Version missing, Mcp-Method or Mcp-Name missing or not
//     matching the body: 400, -32020
//  9. an unsupported protocol version: 400, one object that is both a
//     Problem and a JSON-RPC error (-32022), served as problem+json
//  10. a method other than the three: 404, -32601
//  11. params or params._meta missing or incomplete: 400, -32602;
//     _meta naming another version than the header: 400, -32020
//  12. tools/call with an unknown tool or arguments not an object: 400, -32602
//
// A tool whose operation fails answers a result with isError: true that holds
// the Problem and a sentence saying what to do instead.
//
// It knows no storage and no build: it reads only through service, and
// shares the HTTP rendering of errors with the REST transport through
// httpwire.
package mcp
