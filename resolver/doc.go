// Package resolver is pds's third transport, beside REST (package http) and
// MCP (package mcp): it answers GS1 Digital Link URIs the way a GS1-Conformant
// resolver does, for people and for programs, over the same service
// operations.
//
// # What it serves
//
//   - GET /{AI}/{value}[/{qualifier AI}/{value}…] — any primary key the gs1
//     package parses, with its key qualifiers and data attributes, and the old
//     convenience names (/gtin/…, /lot/…) rewritten to their AIs. A product
//     pds holds is redirected (307) to its passport page, or, when the client
//     asks for it (Accept: application/linkset+json, or ?linkType=linkset or
//     all), answered with its linkset (RFC 9264); ?linkType=gs1:pip and the
//     like redirect to that link. An identifier pds holds nothing for is
//     answered 404 with a page that says what was looked up and what was
//     consulted.
//   - GET /passport/{AI}/{value}… — the passport page: identity, the four
//     verdict axes, every current claim with its unit, evidence and source,
//     and the snapshot build it came from. Server-rendered, no script, no
//     resource from another host.
//   - GET /.well-known/gs1resolver — the resolver description file.
//
// Callers send no key: the pages are public data only (service.Public, a
// caller with no tenant) and each client address is rate-limited through
// the service's Meter.
//
// # Why no library
//
// GS1's own resolver (Resolver CE) is a separate service with its own
// database of links; pds's links come from its snapshot, so the resolver
// logic (which links exist, the linkset, the redirect rules) is written here,
// on html/template, encoding/json and the gs1 package's parser. Content
// negotiation uses github.com/munnerz/goautoneg. FuzzResolve holds that no
// request path makes it panic or answer 5xx.
//
// It owns the resolver's rules and pages; it knows no storage and no build,
// and reads only through service.
package resolver
