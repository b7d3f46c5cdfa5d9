// Package delta writes a file as a list of copies from an older version of
// it, literal bytes and bytes added to the older version's, and rebuilds the file from that list and the older
// version. A replica that keeps yesterday's snapshot fetches only what a
// night changed this way.
//
// Why not a library: the files are Pebble tables of up to 256 MiB, in which
// a changed value shifts every later byte and moves some block boundaries,
// so a match must be found at any byte offset and for base files far larger
// than a compressor's window. Measured on two 1M-product snapshots with 1%
// of the products changed (one 268 MB table): zstd's delta mode in
// klauspost/compress (a raw dictionary, the same idea as zstd --patch-from)
// carried 97.2% of the table at level "better" (24 s) and 96.5% at "best"
// (119 s), because its match tables are far smaller than the base;
// bsdiff needs a suffix array of the base (8 bytes a byte, 2 GB here);
// librsync-style deltas match only whole blocks at block-aligned offsets in
// the target, losing a block at every moved block trailer. This package
// indexes the base in 64-byte blocks and extends every match byte by byte,
// forward and backward: 2.2% of the same table in 4 s. A run between two
// copies that is mostly equal to the base's bytes at the same place (a
// table of offsets after a value before them grew: each entry off by the
// same few units) is carried as differences, mostly zero bytes, which is
// bsdiff's idea without its suffix array: with 1% of 1M products changed,
// the point index's 16 MB table of offsets, which the changed identity
// views shift whole, took 2.5 MB of the compressed delta instead of 12.7 MB.
// Such a run is tried against the base's bytes after the last copy, and
// against those the same distance from the file's end, and followed window
// by window to where it matches best within a few hundred bytes: a table
// from which entries were removed (a night that deletes products) moves by
// an entry at each, and each stretch between two is carried against the
// base's entries at its own place. With one changed product in seven
// deleted instead, at 50k products, that took the doc store's table of
// offsets from 462 KB of the compressed delta to 27 KB, and the point
// index from 586 KB to 112 KB. The caller
// compresses the result if it wants to (the snapshots package does, with
// zstd).
//
// The format: the 8 bytes "PDSDLT02", then operations, each a byte and
// varints: 'c' (copy) with the zigzag varint distance of the copy's start
// from the end of the previous copy and the uvarint length; 'l' (literal)
// with the uvarint length and that many bytes; 'a' (add) with a distance
// as a copy's, the uvarint length and that many bytes, each added (mod
// 256) to the base's byte at the same place from the add's start on; 'e'
// (end) with the uvarint
// size of the whole target, after which nothing follows. Apply checks every
// copy against the base's size, every length against the limit it is
// given, and the end's size against what it wrote: a truncated or damaged
// delta is an error, never a panic or an unbounded write. Deltas of the
// first version ("PDSDLT01", without adds) are read too.
package delta
