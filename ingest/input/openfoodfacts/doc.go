// Package openfoodfacts turns an Open Food Facts dump (JSON Lines, gzip or
// not) into a pds input directory (Import): each usable product record is
// mapped (Map) to a product with its claims, evidence and verdicts, and a
// document holding the record's exact bytes, under the Open Food Facts source
// (OFFSource) and the producer and import sources its fields name. Generate
// writes a synthetic dump of the same shape, for tests and benchmarks.
//
// It owns the mapping from Open Food Facts' fields to domain's vocabulary
// (which field is a claim, at which trust level). It writes input files and
// knows nothing of how ingest builds a snapshot from them, nor of the store,
// the service or any transport; it borrows ingest's scratch store only to
// find the codes a dump repeats.
//
// See docs/import-off.md for the mapping as users see it.
package openfoodfacts
