// Package domain holds the types every other package of pds speaks: claims,
// sources, documents, evidence, verdicts, products and their served views, the
// envelope's statuses and reasons, and the one error type with its codes.
//
// It imports only the standard library. Adapters (kv, index) translate storage
// errors into *Error; transports (http, mcp) turn *Error into wire form.
//
// It owns the vocabulary and nothing else: it knows no storage (kv, index,
// snapshots), no transport (http, mcp, resolver) and no build (ingest), so
// that every one of them can speak it.
package domain
