package scratch

import (
	"math"
	"testing"
)

// A run's file is written whole in memory's size (runBytes, 32 MiB), but
// its size and the offsets of its blocks are int64: a seek finds the block
// of the last indexed key before the one asked for, and where it starts and
// ends, past 4 GiB and past 1 TiB as well as near the start.
func TestRunSeekBlocksPast1TiB(t *testing.T) {
	r := &run{size: 1<<41 + 100, index: []runIndex{
		{key: []byte("a"), off: 0},
		{key: []byte("c"), off: 1<<32 + 7},
		{key: []byte("e"), off: 1<<40 + 9},
		{key: []byte("g"), off: 1<<41 + 11},
	}}
	cases := []struct {
		key      string
		off, end int64
	}{
		{"a", 0, 1<<32 + 7},
		{"b", 0, 1<<32 + 7},
		{"d", 1<<32 + 7, 1<<40 + 9},
		{"f", 1<<40 + 9, 1<<41 + 11},
		{"z", 1<<41 + 11, 1<<41 + 100},
	}
	for _, c := range cases {
		if off, end := r.blockSpan(r.seekBlock([]byte(c.key))); off != c.off || end != c.end {
			t.Errorf("block of %q spans [%d, %d), want [%d, %d)", c.key, off, end, c.off, c.end)
		}
	}
}

// A staged entry (runEntry) gives its place in its chunk and its key's and
// value's lengths as uint32, and its chunk's number in the run as uint32:
// a chunk holds at most chunkBytes and a quarter more (what a merged small
// chunk may add), far under 4 GiB, and a run's chunks are counted in the
// thousands. An entry's key and value are each at most 4 GiB-1 (one
// product's claim or record); how many entries, runs or products a build
// holds is not capped by any of these.
func TestRunEntryLimit(t *testing.T) {
	if uint64(chunkBytes+chunkBytes/4) > math.MaxUint32 {
		t.Errorf("a chunk of %d bytes does not fit a uint32 offset", chunkBytes+chunkBytes/4)
	}
	if uint64(runBytes) > math.MaxUint32 {
		t.Errorf("a run of %d bytes has more chunks than a uint32 counts", runBytes)
	}
	e := runEntry{off: math.MaxUint32, klen: math.MaxUint32, vlen: math.MaxUint32, chunk: math.MaxUint32}
	if uint64(e.off)+uint64(e.klen)+uint64(e.vlen) != 3*(1<<32-1) {
		t.Errorf("an entry's fields are not 32 bits wide: %+v", e)
	}
}
