// Package ingest builds a snapshot from an input directory of NDJSON files.
//
// It streams: every record is validated as it is read and written to a
// scratch Pebble store keyed by subject, which sorts it; the build phase then
// walks the products in subject order, gathers each one's claims, evidence and
// verdicts, and writes the precomputed identity, passport and evidence views
// (one per visibility) as sorted tables of the snapshot's store. Memory holds
// one product's records at a time, plus the sources and parties.
//
// A snapshot is built in a temporary directory beside --out, synced, and
// renamed into place only when it is whole; temporaries that killed builds
// left beside --out are removed by the next build (see tempdir.go).
package ingest
