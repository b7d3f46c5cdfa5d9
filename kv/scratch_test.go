package kv

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
)

// TestScratchSortsAcrossBatches writes several batches' worth of records in
// reverse order (so that they are committed in several batches)
// and reads them back in key order, and by key, after Flush.
func TestScratchSortsAcrossBatches(t *testing.T) {
	s, err := OpenScratch(filepath.Join(t.TempDir(), "scratch"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	value := bytes.Repeat([]byte("v"), 1000)
	n := 5 * batchBytes / len(value) // about five batches
	key := func(i int) []byte { return fmt.Appendf(nil, "k\x00%08d", i) }
	for i := n - 1; i >= 0; i-- {
		if err := s.Set(key(i), append(value[:len(value):len(value)], byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	it, err := s.NewIter([]byte("k\x00"))
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if !bytes.Equal(it.Key(), key(i)) || it.Value()[len(value)] != byte(i) {
			t.Fatalf("entry %d: key %q", i, it.Key())
		}
		i++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if i != n {
		t.Fatalf("read %d entries back, wrote %d", i, n)
	}
	r, err := s.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []int{n - 1, 0, n / 2, n / 2, 1} { // any order, twice the same
		v, ok, err := r.Get(key(j), nil)
		if err != nil || !ok || v[len(value)] != byte(j) {
			t.Fatalf("ScratchReader.Get(%d): %v %v", j, ok, err)
		}
	}
	for _, k := range []string{"k\x00", "k\x0000000001x", "j", "l", "k\x0099999999"} { // absent: a prefix, an extension, outside, past the end
		if v, ok, err := r.Get([]byte(k), nil); err != nil || ok {
			t.Fatalf("ScratchReader.Get(%q) of an absent key: %q %v %v", k, v, ok, err)
		}
	}
	if err := s.Set([]byte("k\x00new"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := r.Get([]byte("k\x00new"), nil); ok {
		t.Fatal("a reader saw a record committed after it was made")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	// Get sees a write not yet flushed, in a batch after committed ones.
	if err := s.Set([]byte("k\x00late"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.Get([]byte("k\x00late"), nil); err != nil || !ok || string(v) != "x" {
		t.Fatalf("Get of a pending write: %q %v %v", v, ok, err)
	}
}
