package kv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// testViews are the encoded views of product i: an identity, a passport and
// an evidence view, alike from product to product as real ones are.
func testViews(i int, tenants ...string) (identity, passport, evidence []byte) {
	subject := fmt.Sprintf("gtin:%014d", i)
	identity = AppendView(nil, View{Tenants: tenants, Body: []byte(fmt.Sprintf(`{"subject":%q,"name":"Product %d"}`, subject, i))})
	claims := fmt.Sprintf(`"claims":[{"id":"clm_%d_1","subject":%q,"predicate":"name","object":{"value":"Product %d"}}]`, i, subject, i)
	passport = AppendView(nil, View{Tenants: tenants, Body: []byte(`"status":"found",` + claims), Coverage: []byte(`{"sources_consulted":["s1"]}`)})
	evidence = AppendView(nil, View{Tenants: tenants, Body: []byte(`"status":"found","chains":[` + claims + `,"links":[{"id":"ev_1"}]]`)})
	return identity, passport, evidence
}

// buildTestStore writes a store of layout 3 with n products (one tenant
// view for every tenth) and its point index under dir.
func buildTestStore(t testing.TB, dir string, n int, fileSize uint64) {
	t.Helper()
	buildTestStoreWith(t, dir, n, fileSize, (*Builder).Train)
}

// buildTestStoreWith is buildTestStore with the dictionaries train makes.
func buildTestStoreWith(t testing.TB, dir string, n int, fileSize uint64, train func(*Builder, Samples) error) {
	t.Helper()
	b, err := NewBuilder(filepath.Join(dir, "store"), filepath.Join(dir, "sst"))
	if err != nil {
		t.Fatal(err)
	}
	if fileSize > 0 {
		b.fileSize = fileSize
	}
	if err := b.WritePoints(filepath.Join(dir, "points")); err != nil {
		t.Fatal(err)
	}
	// At most about 256 samples, as ingest takes (samplesWanted).
	var s Samples
	for i := 0; i < n; i += max(7, n/256) {
		id, p, e := testViews(i)
		s.Identity, s.Passport, s.Evidence = append(s.Identity, id), append(s.Passport, p), append(s.Evidence, e)
	}
	if err := train(b, s); err != nil {
		t.Fatal(err)
	}
	enc := b.Encoder()
	for i := range n {
		subject := fmt.Sprintf("gtin:%014d", i)
		if err := b.Set(Key(TagAlias, subject), AppendAlias(nil, Alias{Subject: subject})); err != nil {
			t.Fatal(err)
		}
		tenants := []string{""}
		if i%10 == 0 {
			tenants = append(tenants, "t1")
		}
		for _, tenant := range tenants {
			id, p, e := testViews(i, tenant)
			if err := b.Set(AppendViewKey(nil, TagIdentity, subject, tenant), enc.Identity(subject, id)); err != nil {
				t.Fatal(err)
			}
			if err := b.Set(AppendViewKey(nil, TagViews, subject, tenant), enc.Views(append(p, e...), len(p))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Set(Key(TagMeta, MetaCursorKey), []byte("k")); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
}

// A store of layout 3 answers every view it was given, by View, by a Reader
// and by Scan, with its point index mapped or read with pread; without the
// index its identity views are an error, not an absence.
func TestLayout3ReadsBack(t *testing.T) {
	dir := t.TempDir()
	const n = 500
	buildTestStore(t, dir, n, 0)
	for _, mode := range []string{"mapped", "pread", "none"} {
		t.Run(mode, func(t *testing.T) {
			st, err := Open(filepath.Join(dir, "store"), 8<<20, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if !st.PointsOnly() {
				t.Fatal("the store does not say it keeps identity views in its point index")
			}
			switch mode {
			case "mapped":
				err = st.UsePoints(filepath.Join(dir, "points"), nil)
			case "pread":
				err = st.ReadPoints(filepath.Join(dir, "points"), nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			if mode == "none" {
				if _, ok, err := st.View(TagIdentity, "gtin:00000000000001", "", nil); ok || err == nil {
					t.Fatalf("identity without the index: %v %v", ok, err)
				}
				return
			}
			r, err := st.NewReader()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for i := range n {
				subject := fmt.Sprintf("gtin:%014d", i)
				for _, tenant := range []string{"", "t1", "t2"} {
					has := tenant == "" || tenant == "t1" && i%10 == 0
					id, p, e := testViews(i, tenant)
					for tag, want := range map[byte][]byte{TagIdentity: id, TagPassport: p, TagEvidence: e} {
						got, ok, err := st.View(tag, subject, tenant, []byte("pre"))
						if err != nil || ok != has || has && string(got) != "pre"+string(want) {
							t.Fatalf("View %c %s %q: %v %v %q", tag, subject, tenant, ok, err, got)
						}
						got, ok, err = r.Get(AppendViewKey(nil, tag, subject, tenant), nil)
						if err != nil || ok != has || has && string(got) != string(want) {
							t.Fatalf("Reader %c %s %q: %v %v", tag, subject, tenant, ok, err)
						}
					}
				}
			}
			for _, tag := range []byte{TagIdentity, TagPassport, TagEvidence} {
				count := 0
				err := st.Scan(tag, func(k, v []byte) error {
					subject, tenant, _ := strings.Cut(string(k), "\x00")
					var i int
					fmt.Sscanf(subject, "gtin:%d", &i)
					id, p, e := testViews(i, tenant)
					want := map[byte][]byte{TagIdentity: id, TagPassport: p, TagEvidence: e}[tag]
					if !bytes.Equal(v, want) {
						return fmt.Errorf("%q: %q", k, v)
					}
					count++
					return nil
				})
				if err != nil || count != n+n/10 {
					t.Errorf("Scan %c: %v, %d views", tag, err, count)
				}
			}
		})
	}
}

// Every table of a built store lands in the bottom level (L6) as it was
// written, and its blocks are compressed as tableOptions says: Snappy, and
// none for TagViews, whose values are zstd frames. The alias table has a
// one-level index however large it grows; TagViews, Pebble's two-level one.
//
// Two things measured outside this project hold here too: Pebble's
// profiles that mix zstd with MinLZ (Good, Balanced, Fast) fall back wholly
// to Snappy at the table format this store's format major version allows
// (MinLZ needs table format 6), which only the "ZSTD" profile escapes; and
// an ingested table goes straight to L6, so a compression setting for L6
// alone is what applies to it. On arm64 those profiles mix zstd with Snappy
// instead (Pebble's choice there), so they keep their zstd blocks.
func TestStoreTablesAsWritten(t *testing.T) {
	dir := t.TempDir()
	buildTestStore(t, dir, 20000, 0)
	store := filepath.Join(dir, "store")
	seen := map[byte]pebble.SSTableInfo{}
	levels := storeLevels(t, store)
	for level, files := range levels {
		for _, info := range files {
			tag := info.Smallest.UserKey[0]
			if level != 6 {
				t.Errorf("table %c is in L%d", tag, level)
			}
			seen[tag] = info
		}
	}
	want := map[byte]string{TagAlias: "Snappy", TagDict: "Snappy", TagMeta: "Snappy", TagViews: "NoCompression"}
	for tag, compression := range want {
		info, ok := seen[tag]
		switch {
		case !ok:
			t.Errorf("table %c: not in the store", tag)
		case info.Properties.CompressionName != compression:
			t.Errorf("table %c: compressed %s, want %s", tag, info.Properties.CompressionName, compression)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("tables %v, want those of %v", seen, want)
	}
	if p := seen[TagAlias].Properties.IndexPartitions; p != 0 {
		t.Errorf("alias table: a two-level index of %d partitions, want one level", p)
	}
	if p := seen[TagViews].Properties.IndexPartitions; p == 0 {
		t.Errorf("views table: a one-level index; the test's table is too small to tell")
	}

	// The trap: a profile mixing zstd and MinLZ, at this store's table format.
	db, err := pebble.Open(filepath.Join(dir, "probe"), storeOptions())
	if err != nil {
		t.Fatal(err)
	}
	format := db.TableFormat()
	db.Close()
	mixed := "Snappy"
	if !sstable.GoodCompression.UsesMinLZ() {
		mixed = "Good"
	}
	for profile, want := range map[*sstable.CompressionProfile]string{
		sstable.GoodCompression: mixed,
		sstable.ZstdCompression: "ZSTD",
	} {
		o := storeOptions().MakeWriterOptions(6, format)
		o.Compression = profile
		path := filepath.Join(dir, "probe-"+profile.Name+".sst")
		f, err := vfs.Default.Create(path, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), o)
		for i := range 1000 {
			w.Set([]byte(fmt.Sprintf("k%06d", i)), bytes.Repeat([]byte("value "), 20))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := tableCompression(t, path); !strings.HasPrefix(got, want) {
			t.Errorf("profile %s at table format %s: blocks compressed %s, want %s", profile.Name, format, got, want)
		}
	}
}

// A store built twice from the same entries is the same bytes, every file,
// its MANIFEST included, though its tables were ingested in different
// seconds (Pebble stamps them with the wall clock; fixCreationTimes).
func TestStoreSameBytesWhenBuiltAgain(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	for i, dir := range dirs {
		if i > 0 { // make the second build's ingest fall in a later second
			for now := time.Now().Unix(); time.Now().Unix() == now; {
				time.Sleep(20 * time.Millisecond)
			}
		}
		buildTestStore(t, dir, 300, 0)
	}
	a, b := treeSums(t, dirs[0]), treeSums(t, dirs[1])
	if len(a) < 8 {
		t.Fatalf("only %d files: %v", len(a), a)
	}
	for name, sum := range a {
		if b[name] != sum {
			t.Errorf("%s differs", name)
		}
	}
	if len(a) != len(b) {
		t.Errorf("%d files, then %d", len(a), len(b))
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
			tags := []byte{TagAlias, TagSource}
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
			for _, level := range storeLevels(t, storeDir) {
				for _, info := range level {
					tag := info.Smallest.UserKey[0]
					if info.Largest.UserKey[0] != tag {
						t.Errorf("a file holds tables %c to %c", tag, info.Largest.UserKey[0])
					}
					files[tag]++
					entries[tag] += info.Properties.NumEntries
				}
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

// storeLevels lists the table files of the store at dir by level, with
// their properties.
func storeLevels(t *testing.T, dir string) [][]pebble.SSTableInfo {
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
	return levels
}

// tableCompression returns the compression the sstable at path names in its
// properties.
func tableCompression(t *testing.T, path string) string {
	t.Helper()
	f, err := vfs.Default.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sstable.NewReader(context.Background(), readable, sstable.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	props, err := r.ReadPropertiesBlock(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return props.CompressionName
}

// treeSums returns the SHA-256 of every file under dir, by relative path.
func treeSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
