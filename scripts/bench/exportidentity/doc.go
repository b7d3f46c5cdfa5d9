// Command exportidentity writes the public identity documents of a snapshot
// as PostgreSQL COPY text (subject TAB json), so that the benchmark's
// PostgreSQL peer holds exactly the documents pds serves.
package main
