// Package kv adapts Pebble to pds: the key layout of a snapshot's store, the
// writer that ingest uses to build it (sorted SSTs ingested into a fresh DB),
// the read-only store the server answers from, and the point index beside it
// (points_*.go: a mapped hash table of the identity views, which answers their
// reads in one probe).
//
// # Basics
//
// Keys are a one-byte table tag, a zero byte, then the table's key parts joined
// by zero bytes (subject strings never hold a zero byte):
//
//	a\x00<identifier>              alias: identifier -> canonical subject, owner tenant, view tenants
//	i\x00<subject>\x00<tenant>     identity view    (tenant "" = public)
//	p\x00<subject>\x00<tenant>     passport view
//	e\x00<subject>\x00<tenant>     evidence view
//	s\x00<source uuid>             source record (domain.Source plus operator)
//	m\x00<name>                    snapshot metadata
//
// A view value is uvarint(len(body)) + body + coverage: body holds the
// envelope members that precede meta, without braces; coverage is the JSON of
// meta.coverage, or empty.
//
// That is the layout of snapshot formats 1 to 3. A store of format 4 (layout
// 3, views.go) writes no tables i, p and e: it keeps each subject's passport
// and evidence views for one visibility as one compressed value of table v,
// their dictionary in table d, and the identity views in the point index
// alone. Reads of tables i, p and e answer the same from either layout.
//
// A store may also be a base's with layers on top (layer.go, NewLayer): the
// base's table files hard-linked, and a night's sets and deletions ingested
// above them; table d then holds the count of layers.
//
// # Caveats
//
// Errors from Pebble are returned as *domain.Error with code INTERNAL_ERROR;
// a missing key is not an error (ok = false).
package kv
