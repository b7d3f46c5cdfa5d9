// Package service implements every operation of pds once: validate, parse a
// Digital Link, resolve, identity, passport, evidence, search, source and
// whoami. The REST and MCP transports both call these functions, so they
// cannot disagree. Operations return a *Result (the envelope members) or a
// *domain.Error; transports only put them on the wire.
//
// It owns each operation's rules (what a caller may see, what it is billed,
// the envelope's members) and reads the snapshot through snapshots, kv and
// index. It knows no transport (no HTTP status, no JSON-RPC) and no build
// (ingest): the snapshot it serves is only read.
package service
