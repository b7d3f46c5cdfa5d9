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
// identifier is a line of deletions.ndjson.
package main
