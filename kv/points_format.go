package kv

import (
	"encoding/binary"
)

// A point index is a side file, written by a Builder beside the store, that
// answers the point reads of one table (PointsTag) with one hash probe
// instead of a Pebble seek. In a store of layout 3 it is the only home of
// that table's entries; in the earlier layout (snapshot format 2, version 1
// of this file) it holds a copy of them, and Pebble answers the same.
//
// Layout of version 3, the one written (integers little-endian):
//
//	header   64 bytes: pointsMagic, count u64, radix bits u64, data length
//	         u64 (a multiple of 8), file size u64, dictionary length u64,
//	         the longest value decoded u64, the longest record u64
//	dict     the table of the documents' shapes (jsonshape.Table.Bytes),
//	         zero-padded to a multiple of 8
//	data     the entries in key order, each uvarint(len(key)),
//	         uvarint(len(value)), key, value: the encoded view (AppendView)
//	         with its body stored by shape (see encodeShaped); zero-padded
//	         to a multiple of 8
//	entries  count × (xxhash64 of the key u64, the record's offset in data
//	         u64), sorted by hash and then offset
//	radix    2^bits + 1 × u32: radix[b] is the first entry whose hash's top
//	         bits are b or more, so bucket b's entries are radix[b] to
//	         radix[b+1]
//
// Version 2 (pointsMagicV2) is the same but for the dictionary section, an
// s2 dictionary (s2.Dict.Bytes; none when its length is 0), and the values,
// each an s2 block of the encoded view made with it. An incremental build
// on a base of version 2 writes version 2, with the base's dictionary.
// A layer (pointsMagicLayer) is a file of version 3 that a night writes on
// top of the index below it (the index written whole, then each earlier
// layer): the night's identity views, and a record with an empty value, a
// deletion, for each key of the files below that the night removed. A read
// looks into the newest file first; the first that holds the key answers,
// and a deletion answers "absent". Its dictionary is the bottom file's.
//
// Version 1 (pointsMagicV1) has the first five header fields, no dictionary,
// and values stored as they are. With about one bucket per entry, a read
// looks at one radix slot, one or two entries and one record: three cache
// lines of a mapped file, and the copies that rebuild a view of a few
// hundred bytes from its shape.
const (
	pointsMagic      = "pdspts3\n"
	pointsMagicLayer = "pdsptsl\n"
	pointsMagicV2    = "pdspts2\n"
	pointsMagicV1    = "pdspts1\n"
	pointsHeaderSize = 64
	pointEntrySize   = 16
	maxPointsBits    = 24 // 16M buckets, 64 MiB of radix: past that, buckets hold more
)

// PointsTag is the table a point index covers: identity views, which every
// resolve item and identity GET reads.
const PointsTag = TagIdentity

// pointsBits is the number of radix bits for n entries: the smallest b with
// 2^b >= n, at most maxPointsBits.
func pointsBits(n int) uint64 {
	b := uint64(0)
	for b < maxPointsBits && 1<<b < n {
		b++
	}
	return b
}

// bucket is the radix bucket of hash h for bits radix bits.
func bucket(h, bits uint64) uint64 { return h >> (64 - bits) } // a shift of 64 is 0

// pad8 rounds n up to a multiple of 8.
func pad8(n uint64) uint64 { return (n + 7) &^ 7 }

type pointEntry struct{ hash, off uint64 }

func uvarintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}
