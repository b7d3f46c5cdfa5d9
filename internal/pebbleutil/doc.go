// Package pebbleutil holds the few helpers that both Pebble stores of pds
// need: the served store (kv) and the offline builds' scratch store
// (scratch).
//
// It knows nothing of what either store holds: the keys, values and tables
// are kv's and scratch's.
package pebbleutil
