// Package export writes a snapshot's public products to a Parquet file for
// data teams: one row a product with its identifiers, identity, passport
// status and verdicts, its attributes in typed columns (numbers beside their
// units), and the sources it cites with the attribution their licences
// require; the file's key-value metadata lists those sources and licences.
//
// It translates domain.PublicProduct (what service.Snapshot's
// EachPublicProduct reads: the API's own answers to a caller without a
// tenant, licence withholding included) into rows; it decides nothing about
// licences itself. The Parquet library is parquet-go/parquet-go: pure Go
// (pds builds with CGO_ENABLED=0 for every platform), maintained, and it
// writes a row group at a time from a Go struct, so the export streams.
//
// It knows no storage and no transport: it reads through service.Snapshot,
// and cmd/pds owns the command and its flags.
package export
