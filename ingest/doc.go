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
// left beside --out are removed by the next build (snapshots/tempdir.go).
//
// ingest owns the input format's rules (what a line must hold, which
// references must resolve, which claim each caller is shown) and computes
// every answer the service serves. It writes through snapshots' Writer and
// encodes through kv's and index's builders, so it knows neither the
// snapshot's layout nor the stores' formats; it knows nothing of the service
// or of any transport.
//
// The files, in the order of a build: options.go and summary.go (what Run
// takes and reports), ingest.go (Run), build.go (the build's sequence and the
// store's last tables), read.go and pipeline.go (reading the input in
// batches), parse.go and validate.go (judging a line alone), refs.go and
// apply.go (references, duplicates, the scratch writes), join.go, gather.go,
// writeviews.go and views.go (the views), kept.go and update.go (kept records
// and incremental builds), rejects.go and progress.go (what the build
// reports as it goes).
package ingest
