// Package index is the manufacturer search index of a snapshot: which products match a
// manufacturer name typed by a person, under the search filters, in a stable order that pages
// without repeats or gaps. See docs/search.md for how matching and ranking work.
//
// An index directory holds a Bleve index with one document per product view (products.bleve),
// for matching and filtering; a doc store with what a hit shows (docs.dat, docs.idx); names.txt,
// the distinct normalised manufacturer names with their doc counts and blocks; and meta.json. It
// is written once by a Builder (built whole by Create, or by Update from a base index, see
// update.go) and then only read: Open opens it read-only and Search never writes.
//
// It owns the index's files and its matching and ranking. It knows nothing
// of ingest's input, the point store (kv), the service or any transport: a
// builder is handed Docs, and a search returns subjects and what a hit
// shows.
package index
