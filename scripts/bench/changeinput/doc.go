// Command changeinput copies an input directory, changing the claims of a
// share of its products: what a night's changes look like to the delta
// benchmark. A product is changed when the xxhash of its subject, modulo
// 10,000, is below --per10k; each of its claims gets a new value (a string
// gets " (changed)" appended, a number 1 added, a boolean flipped). Every
// other file is hard-linked (or copied, across file systems).
//
// With --changes DIR it also writes the change set an incremental build
// (pds ingest --base) takes for the same change: each changed product
// whole (its product line with a new updated_at, its changed claims, its
// evidence and verdicts); the documents they name stay in the base. It
// reads the input's files plain, .zst or .gz, and writes the change set
// plain; --out changes only a plain claims.ndjson. With --delete-one-in N
// about one changed product in N is deleted instead (chosen by other bits
// of the same hash): it has no lines in the change set, and its first
// identifier is a line of deletions.ndjson. With --add-per10k N it also
// adds about N new products per 10,000: each a copy of a product that does
// not change (chosen by a hash of its own), with new identifiers that name
// no product of the input (a GTIN of the same company prefix with another
// item reference and a right check digit, any other identifier with a
// suffix), new claim and evidence ids, and a new updated_at; its claims
// cite the same sources and documents. The default, 0, adds none.
package main
