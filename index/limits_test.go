package index

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// docs.idx gives each doc's record offset in docs.dat and its position as
// u64: a docs.dat past 1 TiB, and positions past 2^32, are read back
// exactly. The offset is set on the writer; no large file is written.
func TestDocStoreOffsetsPast1TiB(t *testing.T) {
	cases := []struct {
		off, pos uint64
	}{
		{1<<32 + 1, 1<<32 + 2},
		{1<<40 + 5, uint64(maxDocs) << posShift},
		{1<<41 + 9, math.MaxUint64},
	}
	for _, c := range cases {
		dir := t.TempDir()
		w, err := newStoreWriter(dir)
		if err != nil {
			t.Fatal(err)
		}
		w.off = c.off
		r := record{subject: "s", updated: "2026-01-01T00:00:00Z", block: 1 << 40}
		if err := w.add(&r, 1<<50, maxDocs-1, c.pos); err != nil {
			t.Fatal(err)
		}
		if err := w.close(); err != nil {
			t.Fatal(err)
		}
		// Read back as a build reads it (in memory) and as a server does (mapped).
		for _, open := range []func() (*docStore, error){
			func() (*docStore, error) { return openStore(dir, 1, 2) },
			func() (*docStore, error) { return openServedStore(dir, 1, 2, OpenOptions{}) },
		} {
			s, err := open()
			if err != nil {
				t.Fatal(err)
			}
			if s.offAt(0) != c.off || s.posAt(0) != c.pos || s.keyAt(0) != 1<<50 || s.nameAt(0) != maxDocs-1 {
				t.Errorf("read back offset %d, position %d, key %d, name %d; want %d, %d", s.offAt(0), s.posAt(0), s.keyAt(0), s.nameAt(0), c.off, c.pos)
			}
			if err := s.close(); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := parsePosID(posID(c.pos)); err != nil || got != c.pos {
			t.Errorf("position %d: its document ID %q parses as %d, %v", c.pos, posID(c.pos), got, err)
		}
	}
}

// The search index holds at most maxDocs (2^32-1) docs, one per product
// and visibility: doc ordinals, name ids, the doc number a cursor carries
// (Position.Doc) and the docs of a Bleve zap segment (its posting lists are
// 32-bit roaring bitmaps; zap's offsets and doc count are u64) are all
// 32-bit. That is 4,294,967,295 products with a public view only, fewer
// with tenants' views. Lifting it means 64-bit ordinals in docs.idx's name
// ids and cursors (a new index format), and more than one zap segment for
// a whole build. Positions are u64 spaced 2^posShift apart, so the last
// doc's fits with room.
func TestSearchIndexDocLimit(t *testing.T) {
	if maxDocs != math.MaxUint32 {
		t.Fatalf("maxDocs = %d, want 2^32-1", maxDocs)
	}
	last := uint64(maxDocs) << posShift // the position a whole build gives its last doc
	if last>>posShift != maxDocs || last > math.MaxUint64-1<<posShift {
		t.Fatalf("the last doc's position %d overflows", last)
	}
	if maxDocs-1 == noName {
		t.Fatal("the largest name id is the no-name mark")
	}
	var b Builder
	b.meta.Docs = maxDocs
	if err := b.addWhole(Doc{Subject: "s"}); !errors.Is(err, errTooManyDocs) {
		t.Fatalf("a doc past maxDocs: %v, want errTooManyDocs", err)
	}
	if err := (&updater{}).add(&b, Doc{Subject: "s"}); !errors.Is(err, errTooManyDocs) {
		t.Fatalf("a doc past maxDocs in an update: %v, want errTooManyDocs", err)
	}
	for _, c := range []struct {
		doc string
		ok  bool
	}{{"4294967295", true}, {"4294967296", false}} {
		var p Position
		err := json.Unmarshal([]byte(`{"id":"s","d":`+c.doc+`}`), &p)
		if (err == nil) != c.ok {
			t.Errorf("a cursor's doc %s: error %v, want read %v", c.doc, err, c.ok)
		}
	}
}
