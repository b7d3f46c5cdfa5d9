package ingest_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest"
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

// A base whose largest store table has one byte flipped is refused before
// its tables are linked into the night's store: the night's manifest would
// otherwise vouch for the damaged bytes with the base's checksum.
func TestBaseWithADamagedStoreTableIsRefused(t *testing.T) {
	dir := t.TempDir()
	base, _ := keptBase(t, dir)
	table := largestFile(t, filepath.Join(base, "store"), ".sst")
	flipByteAt(t, table, -100)
	out := filepath.Join(dir, "night", "next")
	_, err := ingest.Run(context.Background(), ingest.Options{In: emptyChangeSet(t, dir), Out: out, Base: base, Rejects: io.Discard, Sequence: 2})
	refusedCleanly(t, err, out, "store/"+filepath.Base(table), "does not match its checksum")
}

// A base whose kept records have one byte flipped is refused whether or not
// the night would read the damaged block: one that does not would link the
// damage into its own records, for a later night to find.
func TestBaseWithDamagedRecordsIsRefused(t *testing.T) {
	dir := t.TempDir()
	base, _ := keptBase(t, dir)
	table := largestFile(t, base+".records", ".sst")
	flipByteAt(t, table, -100)
	out := filepath.Join(dir, "night", "next")
	_, err := ingest.Run(context.Background(), ingest.Options{In: emptyChangeSet(t, dir), Out: out, Base: base, Rejects: io.Discard, Sequence: 2})
	refusedCleanly(t, err, out, filepath.Base(table), base+".records")
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
