package scratch

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// TestScratchSortsAcrossBatches writes several batches' worth of records in
// reverse order (so that they are committed in several batches)
// and reads them back in key order, and by key, after Flush.
func TestScratchSortsAcrossBatches(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "scratch"))
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
			t.Fatalf("Reader.Get(%d): %v %v", j, ok, err)
		}
	}
	for _, k := range []string{"k\x00", "k\x0000000001x", "j", "l", "k\x0099999999"} { // absent: a prefix, an extension, outside, past the end
		if v, ok, err := r.Get([]byte(k), nil); err != nil || ok {
			t.Fatalf("Reader.Get(%q) of an absent key: %q %v %v", k, v, ok, err)
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

// TestScratchOrderedStore writes a table of the ordered store in rounds, each
// written as a sorted run of its own, with keys that come again in later
// rounds, and a lookup table beside it: the ordered pass merges the runs in
// key order with the last write of a key winning, and the lookup table
// stays readable by key.
func TestScratchOrderedStore(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "scratch"), 'o')
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const rounds, perRound = 6, 2000
	key := func(i int) []byte { return fmt.Appendf(nil, "o\x00%06d", i) }
	want := map[int]string{}
	for r := range rounds {
		// Each round writes every third key from a different start, in
		// descending order, so rounds overlap and keys repeat.
		for i := perRound*3 - 1 - r; i >= 0; i -= 3 {
			v := fmt.Sprintf("round %d", r)
			if err := s.Set(key(i), []byte(v)); err != nil {
				t.Fatal(err)
			}
			want[i] = v
		}
		if err := s.Set([]byte(fmt.Sprintf("L\x00%d", r)), []byte{byte(r)}); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ordered.settle(); err != nil { // the round, to a run
			t.Fatal(err)
		}
	}
	if runs, _ := s.ordered.settle(); len(runs) != rounds {
		t.Fatalf("the ordered store has %d runs, want one a round (%d)", len(runs), rounds)
	}
	it, err := s.NewIter([]byte("o\x00"))
	if err != nil {
		t.Fatal(err)
	}
	prev, n := -1, 0
	for ok := it.First(); ok; ok = it.Next() {
		var i int
		if _, err := fmt.Sscanf(string(it.Key()[2:]), "%d", &i); err != nil {
			t.Fatal(err)
		}
		if i <= prev {
			t.Fatalf("key %d after %d", i, prev)
		}
		if string(it.Value()) != want[i] {
			t.Fatalf("key %d: %q, want the last write, %q", i, it.Value(), want[i])
		}
		prev = i
		n++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Fatalf("read %d keys back, wrote %d", n, len(want))
	}

	r, err := s.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if v, ok, err := r.Get([]byte("L\x003"), nil); err != nil || !ok || v[0] != 3 {
		t.Fatalf("Reader.Get of a lookup table's key: %q %v %v", v, ok, err)
	}
	if _, ok, err := r.Get(key(0), nil); !errors.Is(err, ErrOrderedByKey) || ok {
		t.Fatalf("Reader.Get of an ordered table's key: %v %v, want ErrOrderedByKey", ok, err)
	}
	// Scratch.Get reads an ordered table's key all the same (slowly).
	if v, ok, err := s.Get(key(5), nil); err != nil || !ok || string(v) != want[5] {
		t.Fatalf("Scratch.Get of an ordered table's key: %q %v %v", v, ok, err)
	}
}

// Writers of their own write at once, to both stores, each through its own
// batches; what they flushed is read back by range, and a writer closed
// without a flush drops what it held.
func TestScratchWriters(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "scratch"), 'o')
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	value := bytes.Repeat([]byte("v"), 1000)
	n := batchBytes * 3 / 2 / len(value) // a batch and a half a writer and store
	key := func(tag byte, w, i int) []byte { return fmt.Appendf(nil, "%c\x00%d-%08d", tag, w, i) }
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			sw := s.NewWriter()
			defer sw.Close()
			for i := range n {
				for _, tag := range []byte{'k', 'o'} {
					if err := sw.Set(key(tag, w, i), value); err != nil {
						errs <- err
						return
					}
				}
			}
			errs <- sw.Flush()
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	dropped := s.NewWriter()
	if err := dropped.Set(key('o', 9, 0), value); err != nil {
		t.Fatal(err)
	}
	dropped.Close()
	for _, tc := range []struct {
		lower, upper string
		want         int
	}{
		{"k\x00", "k\x01", 4 * n},
		{"o\x00", "o\x01", 4 * n},
		{"o\x001-", "o\x003-", 2 * n},
		{"k\x002-00000010", "k\x002-00000020", 10},
	} {
		it, err := s.NewRangeIter([]byte(tc.lower), []byte(tc.upper))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for ok := it.First(); ok; ok = it.Next() {
			got++
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("[%q, %q): %d keys, want %d", tc.lower, tc.upper, got, tc.want)
		}
	}
}
