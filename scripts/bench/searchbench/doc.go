// Command searchbench prepares and scores the manufacturer search benchmark:
//
//	searchbench queries  --products FILE --n N --seed S --out FILE
//	    picks N distinct manufacturer names from products.ndjson (weighted by
//	    how many products they have) and writes "typo'd query TAB intended
//	    name" lines: one or two random edits (substitute, delete, insert,
//	    transpose) of a letter.
//	searchbench pds      --url URL --key KEY --queries FILE
//	    asks pds each query and prints the share whose first hit is the
//	    intended maker (compared normalised, so "ACME Foods Ltd" = "Acme
//	    Foods Limited" would not count; only the same normalised name does).
//	searchbench paths    --queries FILE
//	    prints one search URL path a query, for wrk.
//	searchbench sql      --queries FILE
//	    prints one pg_trgm SQL query a line (the same queries, for PostgreSQL).
//	searchbench pgcopy   --products FILE
//	    prints "subject TAB manufacturer" of every public product (COPY text).
//	searchbench score    --pairs FILE
//	    the same share for "intended TAB first hit" lines from another peer.
package main
