package fleet

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"testing"
)

// A delta (and a bundle, the same file) is a tar whose entries are written
// as PAX, as writeDeltaEntry writes them: an entry's size past the 8 GiB
// that a ustar header's octal field holds, and past 1 TiB, is carried in a
// PAX record and read back exactly. Only the header is written.
func TestDeltaEntrySizesPast8GiB(t *testing.T) {
	for _, size := range []int64{1<<33 - 1, 1 << 33, 1<<40 + 3, 1<<41 + 9} {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		if err := tw.WriteHeader(&tar.Header{Name: deltaFilesDir + "store/000001.sst", Mode: 0o644, Size: size, Format: tar.FormatPAX}); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		hd, err := tar.NewReader(&b).Next()
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if hd.Size != size {
			t.Errorf("size %d read back as %d", size, hd.Size)
		}
	}
}

// The origin's deltas.json gives each delta's size as an int64.
func TestDeltaListSizesPast1TiB(t *testing.T) {
	for _, size := range []int64{1<<32 + 1, 1<<40 + 5, 1<<53 + 1} {
		b, err := json.Marshal(deltaList{BuildID: "t", Deltas: []deltaEntry{{Base: "b", Size: size}}})
		if err != nil {
			t.Fatal(err)
		}
		var got deltaList
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.Deltas[0].Size != size {
			t.Errorf("size %d read back as %d", size, got.Deltas[0].Size)
		}
	}
}

// A delta's first entries (delta.json, the target's manifest and its
// signature) are read whole into memory, each at most maxDeltaHeader
// (16 MiB). The manifest lists a file in about 200 bytes, so a delta
// carries a snapshot of at most about 80,000 files: at 256 MiB store
// tables, some 20 TiB of store. Lifting it means a larger maxDeltaHeader
// (the readers' memory), not a new format.
func TestDeltaHeaderEntryLimit(t *testing.T) {
	for _, c := range []struct {
		size int64
		ok   bool
	}{{maxDeltaHeader, true}, {maxDeltaHeader + 1, false}} {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		if err := tw.WriteHeader(&tar.Header{Name: deltaHeaderName, Mode: 0o644, Size: c.size, Format: tar.FormatPAX}); err != nil {
			t.Fatal(err)
		}
		if c.ok {
			b.Write(make([]byte, c.size)) // an entry of exactly the cap is read
		}
		_, err := readTarEntry(tar.NewReader(&b), deltaHeaderName)
		if (err == nil) != c.ok {
			t.Errorf("an entry of %d bytes: error %v, want read %v", c.size, err, c.ok)
		}
	}
}
