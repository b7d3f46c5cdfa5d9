package delta

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// sparse is a base of size bytes whose byte at i is byte(i): a base past
// 1 TiB, read without a file.
type sparse struct{ size int64 }

func (s sparse) ReadAt(p []byte, off int64) (int, error) {
	for i := range p {
		p[i] = byte(off + int64(i))
	}
	return len(p), nil
}

// A delta's copies and adds give their place in the base as a zigzag
// varint distance from the end of the previous copy and their length as a
// uvarint, both 64-bit: a copy from past 1 TiB of a 2 TiB base is applied
// from where it says.
func TestDeltaCopiesPast1TiB(t *testing.T) {
	cases := []struct {
		name string
		at   []int64 // the copies' places in the base, 16 bytes each
	}{
		{"one copy past 1 TiB", []int64{1<<40 + 5}},
		{"forward then back across 2^32 and 2^40", []int64{1<<32 - 3, 1<<41 - 16, 1<<40 + 1, 7}},
	}
	const base = 1<<41 + 100
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := []byte(Magic)
			var want []byte
			prevEnd := int64(0)
			for _, at := range c.at {
				d = append(d, opCopy)
				d = binary.AppendVarint(d, at-prevEnd)
				d = binary.AppendUvarint(d, 16)
				prevEnd = at + 16
				for i := range int64(16) {
					want = append(want, byte(at+i))
				}
			}
			d = append(d, opEnd)
			d = binary.AppendUvarint(d, uint64(len(want)))
			var out bytes.Buffer
			n, err := Apply(&out, bytes.NewReader(d), sparse{base}, base, int64(len(want)))
			if err != nil || n != int64(len(want)) || !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("Apply: %d bytes, %v; got %x, want %x", n, err, out.Bytes(), want)
			}
		})
	}
	// A copy reaching past the base's end is refused, past 1 TiB too.
	d := binary.AppendVarint(append([]byte(Magic), opCopy), base-8)
	d = append(binary.AppendUvarint(d, 16), opEnd, 16)
	if _, err := Apply(new(bytes.Buffer), bytes.NewReader(d), sparse{base}, base, 16); err == nil {
		t.Fatal("a copy past the base's end was applied")
	}
}

// The encoder's table of the base's blocks has int32 slots: it indexes at
// most maxIndexed blocks, the first 2^37-64 bytes (about 128 GiB) of a
// base. A larger base (a point index or Bleve segment of a few hundred
// million products) is encoded all the same, its later blocks found only
// by extending matches; lifting the cap means int64 slots, twice the
// table's memory (8 bytes a block now, with slots half full). Nothing in
// the delta's format changes either way.
func TestDeltaEncoderIndexLimit(t *testing.T) {
	cases := []struct {
		base int
		want int
	}{
		{1 << 30, 1 << 24},
		{1<<37 - 128, maxIndexed - 1},
		{1<<37 - 64, maxIndexed},
		{1 << 37, maxIndexed},
		{1 << 41, maxIndexed},
	}
	for _, c := range cases {
		if got := indexedBlocks(c.base); got != c.want {
			t.Errorf("indexedBlocks(%d) = %d, want %d", c.base, got, c.want)
		}
	}
	last := maxIndexed - 1 // the last block indexed
	if k := int32(last + 1); k <= 0 || int(k-1) != last {
		t.Fatalf("the last block's slot %d does not name it", k)
	}
}
