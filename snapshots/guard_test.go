package snapshots_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
)

// passportSnapshot builds the passport test case into a new snapshot.
func passportSnapshot(t *testing.T) string {
	return ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
}

// largestIn is the largest listed file under prefix.
func largestIn(t *testing.T, dir, prefix string) string {
	t.Helper()
	m, err := snapshots.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	best := snapshots.File{}
	for _, f := range m.Files {
		if strings.HasPrefix(f.Path, prefix) && f.Size > best.Size {
			best = f
		}
	}
	return best.Path
}

// A byte changed at rest is found at the first read of its chunk, when
// opening a snapshot of format 3 or later or after: that read fails with
// domain.ErrDamaged, and the snapshot is damaged from then on. Hashed
// whole, the same snapshot is refused at opening. This holds for the
// store's largest table (its compressed views) and for the point index,
// mapped or read with pread (NoPoints).
func TestChangedByteRefusedAtItsFirstRead(t *testing.T) {
	for _, c := range []struct {
		prefix   string
		noPoints bool
	}{{snapshots.StoreDir + "/", false}, {snapshots.PointsPath, false}, {snapshots.PointsPath, true}} {
		t.Run(fmt.Sprintf("%s, NoPoints %v", c.prefix, c.noPoints), func(t *testing.T) {
			dir := passportSnapshot(t)
			ingesttest.FlipByte(t, filepath.Join(dir, filepath.FromSlash(largestIn(t, dir, c.prefix))))
			s, err := snapshots.Open(dir, snapshots.OpenOptions{CacheBytes: 1 << 20, NoPoints: c.noPoints})
			if err != nil {
				// Opening reads the chunks of a table's footer and index, and
				// of the point index's header and radix: in a small file,
				// the changed byte may be among them.
				if !errors.Is(err, snapshots.ErrInvalid) || !strings.Contains(err.Error(), "do not match their checksum") {
					t.Fatalf("lazy open: %v, want a checksum refusal or none", err)
				}
				return
			}
			defer s.Close()
			if s.Damaged() != nil {
				t.Fatal("damaged before any read")
			}
			err = ingesttest.ReadAll(s)
			if !errors.Is(err, domain.ErrDamaged) || !strings.Contains(err.Error(), "do not match their checksum") {
				t.Fatalf("reading every view: %v, want a checksum refusal", err)
			}
			if !errors.Is(s.Damaged(), domain.ErrDamaged) {
				t.Fatalf("Damaged() = %v after a refused read", s.Damaged())
			}
			if _, _, err := s.View(kv.TagIdentity, "gtin:09520123456788", "", nil); !errors.Is(err, domain.ErrDamaged) && s.Damaged() == nil {
				t.Fatal("a damaged snapshot read on")
			}
			if _, err := snapshots.Open(dir, snapshots.OpenOptions{CacheBytes: 1 << 20, HashAll: true}); !errors.Is(err, snapshots.ErrInvalid) {
				t.Fatalf("hashed whole: %v, want a refusal", err)
			}
		})
	}
}

// The search index is hashed whole before the first search: a byte changed
// in it fails every search, and marks the snapshot damaged.
func TestChangedIndexRefusedBeforeTheFirstSearch(t *testing.T) {
	dir := passportSnapshot(t)
	ingesttest.FlipByte(t, filepath.Join(dir, filepath.FromSlash(largestIn(t, dir, snapshots.IndexDir+"/"))))
	s, err := snapshots.Open(dir, snapshots.OpenOptions{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SelfTest(context.Background()); !errors.Is(err, domain.ErrDamaged) {
		t.Fatalf("self-test: %v, want the search refused", err)
	}
	if s.Damaged() == nil {
		t.Fatal("not damaged")
	}
}

// The chunks file is checked whole at opening: a changed hash refuses the
// snapshot before anything is read.
func TestChangedChunkListRefusedAtOpening(t *testing.T) {
	dir := passportSnapshot(t)
	ingesttest.FlipByte(t, filepath.Join(dir, filepath.FromSlash(snapshots.ChunksName)))
	_, err := snapshots.Open(dir, snapshots.OpenOptions{CacheBytes: 1 << 20})
	if !errors.Is(err, snapshots.ErrInvalid) || !strings.Contains(err.Error(), "chunks does not match its checksum") {
		t.Fatalf("got %v", err)
	}
}

// Check finds a file written, cut, replaced or removed since Open by
// looking at it, without reading it.
func TestCheckFindsChangedFiles(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(p string) error
		want   string
	}{
		{"written", func(p string) error {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt([]byte{0}, 10)
			return err
		}, "written to"},
		{"written, its time set back", func(p string) error {
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = f.WriteAt([]byte{0}, 10)
			f.Close()
			if err != nil {
				return err
			}
			return os.Chtimes(p, st.ModTime(), st.ModTime())
		}, "written to"},
		{"cut", func(p string) error { return os.Truncate(p, 10) }, "size 10"},
		{"replaced", func(p string) error {
			// Written beside it and renamed over it, so that the new file
			// cannot take the old one's inode.
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p+".new", b, 0o644); err != nil {
				return err
			}
			return os.Rename(p+".new", p)
		}, "replaced by another file"},
		{"removed", os.Remove, "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := passportSnapshot(t)
			s, err := snapshots.Open(dir, snapshots.OpenOptions{CacheBytes: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Check(); err != nil {
				t.Fatalf("fresh: %v", err)
			}
			// A file of the search index that no build links, so a
			// change of its change time alone is a change too (store
			// tables, point index files and search segments:
			// TestLinkedFilesServeOn).
			if err := c.change(filepath.Join(dir, filepath.FromSlash(searchIndexFile(t, dir)))); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(); !errors.Is(err, domain.ErrDamaged) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Check: %v, want it to say %q", err, c.want)
			}
		})
	}
}

// searchIndexFile is the manifest path of the largest file of the search
// index of the snapshot at dir that builds do not share (not a segment).
func searchIndexFile(t *testing.T, dir string) string {
	t.Helper()
	m, err := snapshots.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	var best snapshots.File
	for _, f := range m.Files {
		if strings.HasPrefix(f.Path, snapshots.IndexDir+"/") && !snapshots.Shared(f.Path) && f.Size > best.Size {
			best = f
		}
	}
	if best.Path == "" {
		t.Fatalf("%s: no search index file", dir)
	}
	return best.Path
}

// Builds share store tables, point index files and search segments by
// hard links (an incremental build links its base's), so a served
// snapshot's file may gain a link, when the night's build is made from it,
// or lose one, when an older build that shares it is removed: the snapshot
// serves on. Either moves the file's change time as a write does, so the
// chunks of the files read in place are checked again as they are read,
// and a write whose modification time was set back is still refused.
func TestLinkedFilesServeOn(t *testing.T) {
	dir := passportSnapshot(t)
	// No block cache: every read is the file's.
	s, err := snapshots.Open(dir, snapshots.OpenOptions{CacheBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := ingesttest.ReadAll(s); err != nil {
		t.Fatal(err)
	}
	tables, err := filepath.Glob(filepath.Join(dir, snapshots.StoreDir, "*.sst"))
	if err != nil || len(tables) == 0 {
		t.Fatalf("no tables: %v", err)
	}
	tables = append(tables, filepath.Join(dir, filepath.FromSlash(snapshots.PointsPath)))
	other := t.TempDir()
	for i, p := range tables {
		if err := os.Link(p, filepath.Join(other, fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := ingesttest.ReadAll(s); err != nil {
		t.Fatalf("after links were made: %v", err)
	}
	if err := os.RemoveAll(other); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatalf("after the links were removed: %v", err)
	}
	if err := ingesttest.ReadAll(s); err != nil {
		t.Fatalf("after the links were removed: %v", err)
	}
	// The search segments: served from private copies, they are linked
	// and unlinked with searches going on.
	search := func() error {
		_, err := s.Search(context.Background(), index.Query{Manufacturer: "acme", TrustLevelMin: -1, Limit: 1})
		return err
	}
	if err := search(); err != nil {
		t.Fatal(err)
	}
	segments, err := filepath.Glob(filepath.Join(dir, snapshots.IndexDir, "*", "*", "*.zap"))
	if err != nil || len(segments) == 0 {
		t.Fatalf("no search segments: %v", err)
	}
	for i, p := range segments {
		link := filepath.Join(t.TempDir(), fmt.Sprint(i))
		if err := os.Link(p, link); err != nil {
			t.Fatal(err)
		}
		if err := search(); err != nil {
			t.Fatalf("a search after a link to %s: %v", filepath.Base(p), err)
		}
		os.Remove(link)
		if err := search(); err != nil {
			t.Fatalf("a search after the link to %s was removed: %v", filepath.Base(p), err)
		}
	}

	// A write with the modification time set back, to every table: the
	// look takes it for a link, but the bytes read next are checked again.
	for _, p := range tables {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{b[100] ^ 0xff}, 100); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	s.Check()
	fresh, err := snapshots.Open(dir, snapshots.OpenOptions{CacheBytes: 1 << 20})
	if err == nil {
		defer fresh.Close()
		err = ingesttest.ReadAll(fresh)
	}
	if !errors.Is(err, domain.ErrDamaged) && !errors.Is(err, snapshots.ErrInvalid) {
		t.Fatalf("a fresh open of the written table: %v", err)
	}
	if err := ingesttest.ReadAll(s); !errors.Is(err, domain.ErrDamaged) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("a read after the write: %v, want the chunk's checksum refused", err)
	}
}

// asFormat2 rewrites a snapshot as a pds before format 3 wrote it: no
// chunks file, format_version 2.
func asFormat2(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, snapshots.ManifestName)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	m["format_version"] = 2
	var kept []any
	for _, f := range m["files"].([]any) {
		if f.(map[string]any)["path"] != snapshots.ChunksName {
			kept = append(kept, f)
		}
	}
	m["files"] = kept
	if b, err = json.MarshalIndent(m, "", "  "); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, snapshots.ChunksName))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A snapshot of format 2, as pds wrote them before the chunks file, is
// hashed whole at opening and serves the same views as the format 3 build
// it was made from.
func TestFormat2SnapshotServes(t *testing.T) {
	dir := passportSnapshot(t)
	old := filepath.Join(t.TempDir(), "format2")
	if err := os.CopyFS(old, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	asFormat2(t, old)
	views := func(dir string) map[string]string {
		s, err := snapshots.Open(dir, snapshots.OpenOptions{CacheBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.SelfTest(context.Background()); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, tag := range []byte{kv.TagIdentity, kv.TagPassport, kv.TagEvidence} {
			s.Scan(tag, func(k, v []byte) error { out[string(tag)+string(k)] = string(v); return nil })
		}
		return out
	}
	now, before := views(dir), views(old)
	if len(now) == 0 || len(now) != len(before) {
		t.Fatalf("%d views in format 3, %d in format 2", len(now), len(before))
	}
	for k, v := range now {
		if before[k] != v {
			t.Fatalf("view %q differs", k)
		}
	}
	// Damage in a format 2 snapshot is found at opening.
	ingesttest.FlipByte(t, filepath.Join(old, filepath.FromSlash(largestIn(t, old, snapshots.StoreDir+"/"))))
	if _, err := snapshots.Open(old, snapshots.OpenOptions{CacheBytes: 1 << 20}); !errors.Is(err, snapshots.ErrInvalid) {
		t.Fatalf("damaged format 2: %v", err)
	}
}

// A lazy open leaves the search index unhashed until the server asks
// (CheckInBackground) or a search needs it; then a changed file is found
// without any search.
func TestIndexHashedInTheBackgroundWhenAsked(t *testing.T) {
	dir := passportSnapshot(t)
	ingesttest.FlipByte(t, filepath.Join(dir, filepath.FromSlash(largestIn(t, dir, snapshots.IndexDir+"/"))))
	s, err := snapshots.Open(dir, snapshots.OpenOptions{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Damaged(); err != nil {
		t.Fatalf("damaged before any check of the index: %v", err)
	}
	s.CheckInBackground()
	for i := 0; s.Damaged() == nil; i++ {
		if i == 1000 {
			t.Fatal("the changed index file was not found by the background check")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !errors.Is(s.Damaged(), domain.ErrDamaged) {
		t.Fatalf("got %v", s.Damaged())
	}
	if snapshots.IndexOpened(s, true) {
		t.Fatal("the search index was opened although one of its files did not match its hash")
	}
}

// A lazily checked snapshot opens its search index only after its files
// were hashed: not at Open, but in the background or at the first search.
// One hashed whole at Open opens it there. Close stops a check under way.
func TestIndexOpenedOnlyAfterItsHash(t *testing.T) {
	dir := passportSnapshot(t)
	s, err := snapshots.Open(dir, snapshots.OpenOptions{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if snapshots.IndexOpened(s, false) {
		t.Fatal("opened at Open, before its files were hashed")
	}
	if _, err := s.Search(context.Background(), index.Query{Manufacturer: "acme", TrustLevelMin: -1, Limit: 1}); err != nil {
		t.Fatal(err)
	}
	if !snapshots.IndexOpened(s, true) {
		t.Fatal("not opened by the first search")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	whole, err := snapshots.Open(dir, snapshots.OpenOptions{CacheBytes: 1 << 20, HashAll: true})
	if err != nil {
		t.Fatal(err)
	}
	if !snapshots.IndexOpened(whole, false) {
		t.Fatal("hashed whole at Open, but its search index was not opened there")
	}
	whole.Close()

	for range 5 { // closed while the check runs, or before it starts
		s, err := snapshots.Open(dir, snapshots.OpenOptions{CacheBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		s.CheckInBackground()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A server whose memory cannot hold the point index (more than half of its
// memory limit) reads the index a page at a time; one that can, or that
// knows no limit, keeps the kernel's read-ahead. Where the index is read
// into memory instead of mapped (Windows), there is nothing to advise.
func TestPointIndexReadAtRandomWhenMemoryCannotHoldIt(t *testing.T) {
	snap := passportSnapshot(t)
	m, err := snapshots.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, f := range m.Files {
		if f.Path == snapshots.PointsPath {
			size = f.Size
		}
	}
	if size == 0 {
		t.Fatalf("the manifest lists no %s", snapshots.PointsPath)
	}
	for _, c := range []struct {
		name   string
		limit  int64
		random bool
	}{
		{"no limit", 0, false},
		{"twice the index", 2 * size, false},
		{"under twice the index", 2*size - 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := snapshots.Open(snap, snapshots.OpenOptions{MemoryLimit: c.limit})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if want := c.random && runtime.GOOS != "windows"; s.PointsRandom != want {
				t.Errorf("memory limit %d, index %d bytes: read at random %v, want %v", c.limit, size, s.PointsRandom, want)
			}
			if _, ok, err := s.View(kv.TagIdentity, "gtin:04006381333931", "", nil); err != nil || !ok {
				t.Errorf("an identity read: %v %v", ok, err)
			}
		})
	}
}
