// Package synthetic writes synthetic input directories for pds ingest: a
// fixed set of parties and sources, and as many products as asked for, each
// with its claims, documents, evidence links and verdicts, in realistic
// shape (Zipf-distributed manufacturers with name variants, valid GTINs in
// GS1 company prefixes, supersessions, licence-restricted and tenant-private
// data). The same Options give the same bytes.
//
// See docs/gen.md for the shape of the data and the showcase products.
//
// It owns the shape of the generated data only: it writes input files in the
// format docs/input.md describes and knows nothing of how ingest reads them,
// nor of the store or the service.
package synthetic
