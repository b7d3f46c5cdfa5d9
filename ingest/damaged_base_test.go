package ingest_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/records"
	"github.com/productdata/pds/internal/osfile"
	"github.com/productdata/pds/internal/pebbleutil"
	"github.com/productdata/pds/snapshots"
)

// largestFile returns the path of the largest file of folder dir whose
// name ends in suffix.
func largestFile(t *testing.T, dir, suffix string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var largest string
	var size int64 = -1
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(e.Name(), suffix) && info.Size() > size {
			largest, size = filepath.Join(dir, e.Name()), info.Size()
		}
	}
	if largest == "" {
		t.Fatalf("no *%s in %s", suffix, dir)
	}
	return largest
}

// flipByteAt inverts the byte at offset at (from the end when negative) of
// the file at path, in place: the base's tables are hard-linked, so the
// change is made to the file itself, as damage on disk would be.
func flipByteAt(t *testing.T, path string, at int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if at < 0 {
		info, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		at += info.Size()
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
}

// emptyChangeSet writes a change set that changes nothing.
func emptyChangeSet(t *testing.T, dir string) string {
	t.Helper()
	changes := filepath.Join(dir, "changes")
	if err := os.MkdirAll(changes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(changes, ingest.FileProducts), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return changes
}

// refusedCleanly checks that the build into out failed with an error that
// names each of names and says to build whole, and left nothing beside out:
// no snapshot, no records, no temporary folder, no lock.
func refusedCleanly(t *testing.T, err error, out string, names ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("the build on a damaged base succeeded")
	}
	msg := err.Error()
	for _, want := range append(names, "without --base") {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("the error is more than one line: %q", msg)
	}
	for _, p := range []string{out, out + ".records"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was left behind (%v)", p, err)
		}
	}
	dir := filepath.Dir(out)
	if tmp := temporaries(t, dir); len(tmp) > 0 {
		t.Errorf("temporary folders left behind: %v", tmp)
	}
	locks, _ := filepath.Glob(filepath.Join(dir, ".*.lock"))
	if len(locks) > 0 {
		t.Errorf("locks left behind: %v", locks)
	}
}

// With CheckBaseWhole, a base with one byte flipped in its largest store
// table, its point index or its kept records is refused before the night builds on it,
// whether or not the night would read the damaged block.
//
// Without it, a night that does not read the damaged block builds, but
// never vouches for the damage anew: the table is linked into the night
// under the checksum it was written with, so the night's snapshot hashed
// whole (a pull, pds snapshot verify) or its records opened whole refuse
// it, naming the file, and so does the next night that checks whole.
func TestDamageInTheBaseIsRefusedOrCarriedUnderItsOldChecksum(t *testing.T) {
	for _, c := range []struct {
		name string
		dir  func(base string) string // the folder of the damaged table
		in   func(base, night string) string
	}{
		{"store table", func(base string) string { return filepath.Join(base, "store") },
			func(_, night string) string { return filepath.Join(night, "store") }},
		{"records", func(base string) string { return base + ".records" },
			func(_, night string) string { return night + ".records" }},
		{"point index", func(base string) string { return filepath.Join(base, "points") },
			func(_, night string) string { return filepath.Join(night, "points") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			base, _ := keptBaseOf(t, dir, baseSizeFor(c.name))
			table := damageLargestTable(t, c.dir(base))
			name := filepath.Base(table)

			out := filepath.Join(dir, "whole", "next")
			_, err := ingest.Run(context.Background(), ingest.Options{In: emptyChangeSet(t, dir), Out: out, Base: base, CheckBaseWhole: true, Rejects: io.Discard, Sequence: 2})
			refusedCleanly(t, err, out, name)

			night := filepath.Join(dir, "night", "next")
			if _, err := ingest.Run(context.Background(), ingest.Options{In: emptyChangeSet(t, dir), Out: night, Base: base, Rejects: io.Discard, Sequence: 2}); err != nil {
				t.Fatalf("a night that does not read the damaged block: %v", err)
			}
			if linked := filepath.Join(c.in(base, night), name); !sameInode(t, linked, table) {
				t.Fatalf("%s is not the base's table linked", linked)
			}
			switch c.name {
			case "store table", "point index":
				_, err = snapshots.Open(night, snapshots.OpenOptions{HashAll: true})
				if err == nil || !strings.Contains(err.Error(), filepath.Base(c.dir(base))+"/"+name) || !strings.Contains(err.Error(), "does not match its checksum") {
					t.Errorf("the night's snapshot hashed whole: %v, want its table %s refused", err, name)
				}
			case "records":
				_, err = records.Open(night + ".records")
				if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "does not match its checksum") {
					t.Errorf("the night's records opened whole: %v, want %s refused", err, name)
				}
			}
			next := filepath.Join(dir, "whole2", "next")
			_, err = ingest.Run(context.Background(), ingest.Options{In: emptyChangeSet(t, dir), Out: next, Base: night, CheckBaseWhole: true, Rejects: io.Discard, Sequence: 3})
			refusedCleanly(t, err, next, name)
		})
	}
}

// Where the base's tables cannot be linked (the night on another file
// system), they are copied, and a copy gets no checksum of its own: a table
// of the base's store or records with one byte flipped then fails the
// night, which would otherwise vouch for the damaged copy.
func TestCopiedBaseTablesMustHashAsListed(t *testing.T) {
	link, linkTable := osfile.Link, pebbleutil.LinkTable
	osfile.Link = func(string, string) bool { return false }
	pebbleutil.LinkTable = func(string, string) bool { return false }
	defer func() { osfile.Link, pebbleutil.LinkTable = link, linkTable }()
	for _, c := range []struct {
		name string
		dir  func(base string) string
		says string
	}{
		{"store table", func(base string) string { return filepath.Join(base, "store") }, "store/"},
		{"point index", func(base string) string { return filepath.Join(base, "points") }, "points/"},
		{"records", func(base string) string { return base + ".records" }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			base, _ := keptBaseOf(t, dir, baseSizeFor(c.name))
			table := damageLargestTable(t, c.dir(base))
			out := filepath.Join(dir, "night", "next")
			_, err := ingest.Run(context.Background(), ingest.Options{In: emptyChangeSet(t, dir), Out: out, Base: base, Rejects: io.Discard, Sequence: 2})
			refusedCleanly(t, err, out, c.says+filepath.Base(table), "does not match its checksum")
		})
	}
}

// baseSizeFor is the products of the base a damage test of case name
// builds: enough for a point index of more than one chunk (64 KiB).
func baseSizeFor(name string) int {
	if name == "point index" {
		return 3000
	}
	return 300
}

// damageLargestTable flips the middle byte of the largest table in folder
// dir (or point index file, in a snapshot's folder points: the base must
// then hold a chunk of records alone, keptBaseOf 3,000 products), in a block
// an empty night does not read, and returns its path.
func damageLargestTable(t *testing.T, dir string) string {
	t.Helper()
	suffix := ".sst"
	points := filepath.Base(dir) == "points" // the point index and its layers
	if points {
		suffix = ""
	}
	table := largestFile(t, dir, suffix)
	st, err := os.Stat(table)
	if err != nil {
		t.Fatal(err)
	}
	at := st.Size() / 2
	if points {
		// The middle of the records, in a chunk (64 KiB) of its own: the
		// header, the dictionary and the radix (with pread, whole) are
		// read to open the index, the records only by probes.
		b, err := os.ReadFile(table)
		if err != nil || len(b) < 64 {
			t.Fatalf("%s: %v", table, err)
		}
		dict, data := binary.LittleEndian.Uint64(b[40:]), binary.LittleEndian.Uint64(b[24:])
		from := int64(64 + (dict+7)&^7)
		to := from + int64(data)
		at = (from + to) / 2
		if chunk := int64(64 << 10); from/chunk == at/chunk || to/chunk == at/chunk {
			t.Fatalf("%s: records from %d to %d: no chunk of them alone, the base is too small", table, from, to)
		}
	}
	flipByteAt(t, table, at)
	return table
}

// sameInode reports whether paths a and b are one file.
func sameInode(t *testing.T, a, b string) bool {
	t.Helper()
	x, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(x, y)
}

// A read of the base's kept records that fails (the records damaged after
// the build checked them) fails the build, naming the file and the key: it
// is not taken for an absent record. Here the change set restates a
// document of the base, whose products would otherwise keep their views of
// the old one, the document taken for new.
func TestBaseRecordsReadErrorFailsTheBuild(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: "../sample-input", Out: base, Rejects: io.Discard, KeepRecords: true, Sequence: 1}); err != nil {
		t.Fatal(err)
	}
	// The document of the smallest id is in the first block of the
	// records' table of documents.
	docs := readLines(t, "../sample-input/documents.ndjson")
	first := slices.MinFunc(docs, func(a, b json.RawMessage) int { return strings.Compare(member(t, a, "id"), member(t, b, "id")) })
	id := member(t, first, "id")
	changes := emptyChangeSet(t, dir)
	changed := strings.Replace(string(first), `"url":"https:`, `"url":"http:`, 1)
	if changed == string(first) {
		t.Fatalf("document %s has no https url to change", id)
	}
	if err := os.WriteFile(filepath.Join(changes, ingest.FileDocuments), []byte(changed+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var damaged []string
	defer ingest.SetOpenedBase(func(records string) {
		tables, err := filepath.Glob(filepath.Join(records, "*.sst"))
		if err != nil || len(tables) == 0 {
			t.Errorf("no tables in %s: %v", records, err)
		}
		for _, p := range tables {
			flipByteAt(t, p, 1) // in the table's first data block
			damaged = append(damaged, filepath.Base(p))
		}
	})()
	out := filepath.Join(dir, "night", "next")
	_, err := ingest.Run(context.Background(), ingest.Options{In: changes, Out: out, Base: base, Rejects: io.Discard, Sequence: 2})
	refusedCleanly(t, err, out, base+".records", `D\x00`+id, ".sst is damaged", "documents.ndjson:1")
	if err != nil && !slices.ContainsFunc(damaged, func(name string) bool { return strings.Contains(err.Error(), name) }) {
		t.Errorf("the error names none of the files %v: %v", damaged, err)
	}
}
