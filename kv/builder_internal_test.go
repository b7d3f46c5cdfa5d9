package kv

import (
	"fmt"
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

	opts := storeOptions()
	opts.ReadOnly = true
	db, err := pebble.Open(storeDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	levels, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	partitions := map[byte]uint64{}
	for _, level := range levels {
		for _, info := range level {
			partitions[info.Smallest.UserKey[0]] = info.Properties.IndexPartitions
		}
	}
	db.Close()
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

	st, err := Open(storeDir, 8<<20, nil)
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
