package snapshots

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
)

// A manifest gives sizes, counts and the sequence as JSON integers read
// into int64: a file past 4 GiB (and past 1 TiB) and counts past 2^32 come
// back exactly, with no float rounding on the way.
func TestManifestSizesPast4GiB(t *testing.T) {
	sum := prefixBLAKE3 + strings.Repeat("ab", 32)
	cases := []struct {
		name  string
		size  int64
		count int64
	}{
		{"past 4 GiB", 1<<32 + 1, 1<<32 + 1},
		{"past 1 TiB", 1<<40 + 3, 1_000_000_000},
		{"2 TiB, 2^53 + 1 products", 1<<41 + 7, 1<<53 + 1}, // 2^53+1 is where a float64 would round
		{"the largest file", 1<<63 - 1, 1<<63 - 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := Manifest{
				FormatVersion: FormatVersion, BuildID: "b", Sequence: c.count,
				Counts:   map[string]int64{"products": c.count},
				Rejected: map[string]int64{"records": c.count},
				Files:    []File{{Path: "store/000001.sst", Size: c.size, BLAKE3: sum}},
			}
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			var got Manifest
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got.Files[0].Size != c.size || got.Counts["products"] != c.count || got.Rejected["records"] != c.count || got.Sequence != c.count {
				t.Fatalf("read back size %d, count %d, sequence %d; want %d, %d", got.Files[0].Size, got.Counts["products"], got.Sequence, c.size, c.count)
			}
		})
	}
}

// The chunks file lists a file's chunk hashes by its manifest size:
// chunkCount is int64, so a 2 TiB file has 2^25 chunks (512 MiB of hashes
// in the chunks file, held in memory while served), and the guard's chunk
// arithmetic (chunk i starts at i*ChunkSize) stays exact past 1 TiB.
func TestChunksPositionsPast1TiB(t *testing.T) {
	cases := []struct {
		size, chunks int64
	}{
		{1<<32 + 1, 1<<16 + 1},
		{1 << 40, 1 << 24},
		{1<<40 + 1, 1<<24 + 1},
		{1<<41 + ChunkSize - 1, 1<<25 + 1},
	}
	for _, c := range cases {
		if got := chunkCount(c.size); got != c.chunks {
			t.Errorf("chunkCount(%d) = %d, want %d", c.size, got, c.chunks)
		}
		last := c.chunks - 1
		if start := last * ChunkSize; start >= c.size || c.size-start > ChunkSize {
			t.Errorf("size %d: last chunk starts at %d", c.size, start)
		}
	}
	// The checked bits of a served file of 2 TiB: one per chunk, 4 MiB.
	s := &sealed{done: make([]atomic.Uint64, (chunkCount(1<<41)+63)/64)}
	for _, i := range []int64{0, 1<<24 + 5, 1<<25 - 1} {
		s.markChecked(i, 0)
		if !s.checked(i) || i > 0 && s.checked(i-1) {
			t.Errorf("chunk %d: checked bits wrong", i)
		}
	}
}

// The chunks file's header gives the chunk size and the number of files
// as u32: a snapshot lists at most 2^32-1 files besides the chunks file
// (a 1B-product snapshot has a few thousand: 256 MiB store tables, Bleve
// segments). Each file's hashes are counted from its int64 size, not
// stored as a count, so nothing there caps a file's size.
func TestChunksFileCountLimit(t *testing.T) {
	files := []File{{Path: "a"}, {Path: "b"}, {Path: ChunksName}}
	b := encodeChunks(files[:2])
	if got := binary.LittleEndian.Uint32(b[12:]); got != 2 {
		t.Fatalf("file count %d, want 2", got)
	}
	if _, err := decodeChunks(b, files); err != nil {
		t.Fatal(err)
	}
	const maxFiles = 1<<32 - 1
	binary.LittleEndian.PutUint32(b[12:], maxFiles)
	if got := binary.LittleEndian.Uint32(b[12:]); got != maxFiles {
		t.Fatalf("file count %d, want %d", got, maxFiles)
	}
}
