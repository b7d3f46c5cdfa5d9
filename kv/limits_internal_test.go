package kv

import (
	"encoding/binary"
	"testing"
)

// pointsHeader encodes a version 2 header with the given fields, as
// writeTail does, without writing any of the parts it describes.
func pointsHeader(count, bits, dataLen, size, dictLen, maxValue, maxRecord uint64) []byte {
	h := make([]byte, pointsHeaderSize)
	copy(h, pointsMagic)
	le := binary.LittleEndian
	le.PutUint64(h[8:], count)
	le.PutUint64(h[16:], bits)
	le.PutUint64(h[24:], dataLen)
	le.PutUint64(h[32:], size)
	le.PutUint64(h[40:], dictLen)
	le.PutUint64(h[48:], maxValue)
	le.PutUint64(h[56:], maxRecord)
	return h
}

// pointsSize is the file size writeTail gives the parts.
func pointsSize(count, bits, dataLen, dictLen uint64) uint64 {
	return pointsHeaderSize + pad8(dictLen) + dataLen + count*pointEntrySize + (1<<bits+1)*4
}

// The point index's header and entries hold sizes and record offsets as
// u64: a file past 1 TiB, with data past 2^40 bytes, is described and
// sliced exactly. Only the header is made; no large file is written.
func TestPointsHeaderHoldsOffsetsPast1TiB(t *testing.T) {
	cases := []struct {
		name                    string
		count, bits, data, dict uint64
	}{
		{"1B products, 1 TiB of data", 1_000_000_000, maxPointsBits, 1 << 40, uint64(identityDictSize)},
		{"the most entries, 2 TiB + 8 of data", 1<<32 - 1, maxPointsBits, 1<<41 + 8, 0},
		{"100M products, data past 2^40", 100_000_000, 24, 1<<40 + 4096, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			size := pointsSize(c.count, c.bits, c.data, c.dict)
			if size <= 1<<40 {
				t.Fatalf("size %d is not past 1 TiB", size)
			}
			h := pointsHeader(c.count, c.bits, c.data, size, c.dict, 1<<20, 1<<33)
			p, err := parsePointsHeader(h, size)
			if err != nil {
				t.Fatalf("parsePointsHeader: %v", err)
			}
			if p.count != c.count || p.bits != c.bits || p.dataLen != c.data || p.dictLen != c.dict || p.maxRecord != 1<<33 {
				t.Fatalf("decoded %+v, want count %d bits %d data %d dict %d", p, c.count, c.bits, c.data, c.dict)
			}
			if want := pointsHeaderSize + pad8(c.dict) + c.data; p.entriesAt != want {
				t.Fatalf("entries at %d, want %d", p.entriesAt, want)
			}
			if want := size - (1<<c.bits+1)*4; p.radixAt() != want {
				t.Fatalf("radix at %d, want %d", p.radixAt(), want)
			}
			// A record's offset in data is a u64 of its entry.
			var e [pointEntrySize]byte
			off := c.data - 8
			binary.LittleEndian.PutUint64(e[8:], off)
			if got := binary.LittleEndian.Uint64(e[8:]); got != off || p.dataAt+got < 1<<40 {
				t.Fatalf("record offset %d read back as %d", off, got)
			}
		})
	}
}

// The point index's radix holds entry numbers as u32: it addresses at most
// 2^32-1 entries, one per identity view (a product's public view and one
// per tenant with a view of its own). That is 4,294,967,295 products when
// each has one view; lifting it means u64 radix slots, a new version of the
// file (its magic), and twice the radix's memory (128 MiB at 24 bits).
// The writer refuses more (writeTail), and a header that says more is
// refused as not matching its file.
func TestPointsCountLimit(t *testing.T) {
	const maxEntries = 1<<32 - 1
	cases := []struct {
		count uint64
		ok    bool
	}{
		{maxEntries, true},
		{maxEntries + 1, false},
		{1 << 33, false},
	}
	for _, c := range cases {
		size := pointsSize(c.count, maxPointsBits, 1<<40, 0)
		_, err := parsePointsHeader(pointsHeader(c.count, maxPointsBits, 1<<40, size, 0, 1, 1), size)
		if (err == nil) != c.ok {
			t.Errorf("count %d: error %v, want accepted %v", c.count, err, c.ok)
		}
	}
	// The radix is capped at 2^24 buckets (64 MiB in memory): past 16M
	// entries the buckets hold more than one entry each, about 60 at 1B
	// entries, which costs a read more entries but caps nothing.
	if got := pointsBits(1_000_000_000); got != maxPointsBits {
		t.Errorf("pointsBits(1e9) = %d, want %d", got, maxPointsBits)
	}
	if got := pointsBits(1 << 33); got != maxPointsBits {
		t.Errorf("pointsBits(2^33) = %d, want %d", got, maxPointsBits)
	}
}

// A layout 3 value of table TagViews gives its frame's decoded length and
// its passport's part of it as uvarints; a store refuses frames past
// maxFrame (1 GiB), one product's views for one visibility, not a cap on
// the number of products or the store's size.
func TestViewsValueLengthsCap(t *testing.T) {
	cases := []struct {
		total, plen uint64
		ok          bool
	}{
		{maxFrame, maxFrame / 2, true},
		{maxFrame + 1, 1, false},
		{1 << 40, 1, false},
	}
	for _, c := range cases {
		v := binary.AppendUvarint(nil, c.total)
		v = binary.AppendUvarint(v, c.plen)
		total, plen, _, err := viewsHeader(v)
		if (err == nil) != c.ok {
			t.Errorf("total %d: error %v, want accepted %v", c.total, err, c.ok)
			continue
		}
		if c.ok && (total != c.total || plen != c.plen) {
			t.Errorf("decoded %d, %d; want %d, %d", total, plen, c.total, c.plen)
		}
	}
}
