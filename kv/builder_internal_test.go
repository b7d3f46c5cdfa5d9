package kv

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// The identity and alias tables are written with a one-level index however
// large they grow; the other tables keep Pebble's two-level index once
// their index outgrows a block. Every key reads back either way.
func TestSingleLevelIndexTables(t *testing.T) {
	dir := t.TempDir()
	storeDir := filepath.Join(dir, "store")
	b, err := NewBuilder(storeDir, filepath.Join(dir, "sst"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000 // about 500 data blocks a table: an index of several blocks
	value := []byte(strings.Repeat("v", 100))
	for _, tag := range []byte{TagAlias, TagEvidence, TagIdentity, TagPassport} {
		for i := range n {
			if err := b.Set(AppendViewKey(nil, tag, fmt.Sprintf("gtin:%014d", i), ""), value); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}

	partitions := map[byte]uint64{}
	for _, info := range storeFiles(t, storeDir) {
		partitions[info.Smallest.UserKey[0]] = info.Properties.IndexPartitions
	}
	for _, tag := range []byte{TagAlias, TagEvidence, TagIdentity, TagPassport} {
		p, ok := partitions[tag]
		single := tag == TagIdentity || tag == TagAlias
		switch {
		case !ok:
			t.Errorf("table %c: not in the store", tag)
		case single && p != 0:
			t.Errorf("table %c: a two-level index of %d partitions, want one level", tag, p)
		case !single && p == 0:
			t.Errorf("table %c: a one-level index; the test's tables are too small to tell", tag)
		}
	}

	st, err := Open(storeDir, 8<<20, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tag := range []byte{TagAlias, TagEvidence, TagIdentity, TagPassport} {
		for _, i := range []int{0, 1, n / 2, n - 1} {
			v, ok, err := st.View(tag, fmt.Sprintf("gtin:%014d", i), "", nil)
			if err != nil || !ok || string(v) != string(value) {
				t.Errorf("table %c key %d: %v %v %q", tag, i, ok, err, v)
			}
		}
	}
}

// A table larger than the builder's file size is written as several files of
// consecutive key ranges; every key reads back, and the files hold them all.
func TestTableFiles(t *testing.T) {
	tests := []struct {
		name      string
		fileSize  uint64
		wantFiles int // per table, at least
	}{
		{"one file", tableFileSize, 1},
		{"split", 64 << 10, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			storeDir := filepath.Join(dir, "store")
			b, err := NewBuilder(storeDir, filepath.Join(dir, "sst"))
			if err != nil {
				t.Fatal(err)
			}
			b.fileSize = tc.fileSize
			const n = 5000
			// Values that do not compress, so the files' sizes follow n.
			rng := rand.New(rand.NewPCG(1, 2))
			values := make([][]byte, n)
			for i := range values {
				values[i] = make([]byte, 100)
				for j := range values[i] {
					values[i][j] = byte(rng.Uint32())
				}
			}
			tags := []byte{TagEvidence, TagIdentity}
			for _, tag := range tags {
				for i := range n {
					if err := b.Set(AppendViewKey(nil, tag, fmt.Sprintf("gtin:%014d", i), ""), values[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := b.Finish(); err != nil {
				t.Fatal(err)
			}

			files := map[byte]int{}
			entries := map[byte]uint64{}
			for _, info := range storeFiles(t, storeDir) {
				tag := info.Smallest.UserKey[0]
				if info.Largest.UserKey[0] != tag {
					t.Errorf("a file holds tables %c to %c", tag, info.Largest.UserKey[0])
				}
				files[tag]++
				entries[tag] += info.Properties.NumEntries
			}
			for _, tag := range tags {
				if files[tag] < tc.wantFiles || (tc.wantFiles == 1 && files[tag] != 1) {
					t.Errorf("table %c: %d files, want %d or more (exactly 1 when unsplit)", tag, files[tag], tc.wantFiles)
				}
				if entries[tag] != n {
					t.Errorf("table %c: %d entries in its files, want %d", tag, entries[tag], n)
				}
			}

			st, err := Open(storeDir, 8<<20, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for _, tag := range tags {
				for i := range n {
					v, ok, err := st.View(tag, fmt.Sprintf("gtin:%014d", i), "", nil)
					if err != nil || !ok || string(v) != string(values[i]) {
						t.Fatalf("table %c key %d: %v %v %q", tag, i, ok, err, v)
					}
				}
			}
		})
	}
}

// storeFiles lists the table files of the store at dir, of every level, with
// their properties.
func storeFiles(t *testing.T, dir string) []pebble.SSTableInfo {
	t.Helper()
	opts := storeOptions()
	opts.ReadOnly = true
	db, err := pebble.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	var files []pebble.SSTableInfo
	for _, level := range levels {
		files = append(files, level...)
	}
	return files
}
