// Package records is the store of records a build keeps beside its snapshot
// so that the next build can be incremental (pds ingest --base): each
// product's accepted input records, the documents, the sources and parties,
// and what each product's views cite. A snapshot holds views, which cannot
// be turned back into the records they were computed from; an incremental
// build needs the records of every product whose views it must compute
// again.
//
// It is a Pebble store, as the served store and the scratch store are, and
// is never shipped: it stays on the machine that builds. The next build
// checks every file of it against the checksums it was closed with
// (SumsName), copies it (hard links to its immutable tables), writes the
// night's changes into the copy, and leaves the base untouched.
// Keys and values are ingest's; this package only stores them and turns
// Pebble's errors into its own.
package records
