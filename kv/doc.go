// Package kv adapts Pebble to pds: it owns the store of a snapshot, from
// the bytes on disk to the decoded views and aliases its callers ask for.
//
// # What it owns
//
// The key layout. Keys are a one-byte table tag, a zero byte, then the
// table's key parts joined by zero bytes (subject strings never hold a zero
// byte):
//
//	a\x00<identifier>              alias: identifier -> canonical subject, owner tenant, view tenants
//	i\x00<subject>\x00<tenant>     identity view    (tenant "" = public)
//	p\x00<subject>\x00<tenant>     passport view
//	e\x00<subject>\x00<tenant>     evidence view
//	v\x00<subject>\x00<tenant>     passport and evidence views, compressed together (layout 3)
//	d\x00<name>                    dictionaries and the count of layers (layout 3)
//	s\x00<source uuid>             source record (domain.Source plus operator)
//	m\x00<name>                    snapshot metadata, by the names in keys.go (MetaCursorKey)
//
// A view value is uvarint(len(body)) + body + coverage: body holds the
// envelope members that precede meta, without braces; coverage is the JSON
// of meta.coverage, or empty. A store of layout 3 (views.go; snapshot
// format 4 and later) holds table v instead of p and e, and keeps the
// identity views in the point index alone (points_*.go: a mapped hash table
// that answers a read in one probe); the layouts before it hold tables i, p
// and e. Reads of tables i, p and e answer the same from any layout.
//
// The read order. Pebble's seeks are quickest in key order and the point
// index's probes in any order with their memory loaded a window at a time;
// the batched reads (Reader.Identities, Reader.Aliases) take subjects and
// identifiers, read in the order that suits the store, and answer in the
// caller's order.
//
// The layers. A store may be a base's with layers on top (layer.go,
// NewLayer): the base's table files hard-linked, and a night's sets and
// deletions ingested above them. Given the night's entries and the base's
// products it drops (Night), kv decides what a layer writes against the
// base (night.go), or merges both into a store written whole.
//
// # What it must not know
//
// kv knows Pebble, its own keys and values, and domain's errors. It does not
// know the service that answers from a store, the ingest that computes the
// views it is given, or the snapshot format that places the store and its
// point index in a folder and checks their files (snapshots hands it a
// Guard); it imports none of them.
//
// # Caveats
//
// Errors from Pebble are returned as *domain.Error with code INTERNAL_ERROR;
// a missing key is not an error (ok = false). The errors of kv itself are
// listed in errors.go.
package kv
