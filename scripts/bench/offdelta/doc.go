// Command offdelta writes what an Open Food Facts daily delta file looks
// like for a dump: the lines of a share of its products, changed (the
// name gets " (changed)" appended and last_modified_t moves a day on), in
// the dump's JSON Lines, gzip when --out ends in .gz. A product is changed
// when the xxhash of its code, modulo 10,000, is below --per10k; a code
// that repeats in the dump is changed once. For the nightly benchmark of
// docs/import-off.md (make bench-off-nightly).
package main
