// Package scratch is ingest's external sort: a throwaway store that takes
// records in input order and gives them back in key order, with memory
// bounded whatever the input's size (Store). A lookup store (Pebble) holds
// the tables read by key while the input is read; an ordered store of sorted
// runs (runs.go) holds the tables read once, in key order.
//
// It owns bytes under keys and nothing more: what a key or a value means
// (the tables, their tags, the record format) is its callers' (ingest, the
// Open Food Facts importer). It knows nothing of snapshots or of the served
// store, and its folder is removed when it closes.
package scratch
