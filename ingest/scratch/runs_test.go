package scratch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// runKey returns a key of a small key space, so that keys repeat: some
// shorter than the prefixLen bytes the sort compares first, some longer and
// equal in those bytes, some with zero bytes, some a prefix of others.
func runKey(r *rand.Rand) []byte {
	n := r.IntN(300)
	switch r.IntN(7) {
	case 6:
		return append([]byte("c"), make([]byte, n%5)...) // "c", "c\x00", "c\x00\x00", ...: equal prefixes, lengths decide
	case 0:
		return fmt.Appendf(nil, "c\x00%d", n) // short
	case 1:
		return fmt.Appendf(nil, "c\x00gtin:0760212398%04d\x00claim-%d", n%40, n) // within the prefix, or just past it
	case 5:
		return fmt.Appendf(nil, "c\x00gtin:0760212398%04d\x00claim-000000000000-%d", n%40, n) // long, the prefix shared
	case 2:
		return fmt.Appendf(nil, "c\x00gtin:0760212398%04d", n%40) // a prefix of case 1's
	case 3:
		return fmt.Appendf(nil, "c\x00\x00\x00%c", byte(n)) // zero bytes, any byte at the end
	default:
		return fmt.Appendf(nil, "d\x00%08d", n)
	}
}

// runValue is a value of any size, now and then past a reader's buffer.
func runValue(r *rand.Rand, i int) []byte {
	switch r.IntN(1000) {
	case 0:
		return nil
	case 1:
		return bytes.Repeat(fmt.Appendf(nil, "big %d ", i), runBlockBytes/4) // past a block
	default:
		return fmt.Appendf(nil, "value %d", i)
	}
}

// The ordered store against a sorted map: entries committed in chunks of
// any size, over many runs, with keys written again and again, read back in
// key order with each key's last write, whole, by range and from seeks.
//
// With mergeBelow 0 every committed chunk stays a chunk of its own, so that
// a run holds many chunks and a key's writes in several of them.
func TestRunStoreMatchesSortedMap(t *testing.T) {
	for _, tc := range []struct {
		seed       uint64
		mergeBelow int
	}{{1, chunkBytes / 4}, {2, chunkBytes / 4}, {3, 0}} {
		t.Run(fmt.Sprintf("seed %d, chunks merged below %d", tc.seed, tc.mergeBelow), func(t *testing.T) {
			r := rand.New(rand.NewPCG(tc.seed, 0))
			rs, err := openRunStore(filepath.Join(t.TempDir(), "ordered"), 64<<10) // many runs
			if err != nil {
				t.Fatal(err)
			}
			defer rs.close()
			rs.mergeBelow = tc.mergeBelow
			want := map[string][]byte{}
			c := newChunk()
			for i := range 20000 {
				k, v := runKey(r), runValue(r, i)
				c.add(k, v)
				want[string(k)] = v
				if r.IntN(100) == 0 {
					if err := rs.commit(c); err != nil {
						t.Fatal(err)
					}
					c = newChunk()
				}
			}
			if err := rs.commit(c); err != nil {
				t.Fatal(err)
			}
			runs, err := rs.settle()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d runs", len(runs))
			if len(runs) < 10 {
				t.Fatalf("%d runs: the test means to merge many", len(runs))
			}
			keys := make([]string, 0, len(want))
			for k := range want {
				keys = append(keys, k)
			}
			slices.Sort(keys)

			// check reads the merge from its position and compares it with
			// keys[from:to].
			check := func(what string, m *runMerge, ok bool, from, to int) {
				t.Helper()
				for i := from; i < to; i++ {
					if !ok {
						t.Fatalf("%s: ended before %q (%d of %d), err %v", what, keys[i], i-from, to-from, m.Error())
					}
					if string(m.Key()) != keys[i] || !bytes.Equal(m.Value(), want[keys[i]]) {
						t.Fatalf("%s: at %d got %q = %.40q, want %q = %.40q", what, i-from, m.Key(), m.Value(), keys[i], want[keys[i]])
					}
					ok = m.Next()
				}
				if ok || m.Error() != nil {
					t.Fatalf("%s: more than %d keys, or an error: %v", what, to-from, m.Error())
				}
			}
			all := newRunMerge(runs, nil, nil)
			check("all", all, all.First(), 0, len(keys))
			for range 100 {
				a := r.IntN(len(keys))
				b := a + r.IntN(len(keys)-a+1) // keys[a:b], b == len(keys): no upper bound
				lower, upper := []byte(keys[a]), []byte(nil)
				if b < len(keys) {
					upper = []byte(keys[b])
				}
				what := fmt.Sprintf("[%q, %q)", lower, upper)
				m := newRunMerge(runs, lower, upper)
				check(what, m, m.First(), a, b)
				if s := a + r.IntN(b-a+1); s < b { // a seek inside the range, to a key and past it
					check(fmt.Sprintf("seek %q in %s", keys[s], what), m, m.SeekGE([]byte(keys[s])), s, b)
					past := keys[s] + "\x00" // absent, or the next key
					from, _ := slices.BinarySearch(keys, past)
					check(fmt.Sprintf("seek %q in %s", past, what), m, m.SeekGE([]byte(past)), min(from, b), b)
					if m.SeekGE([]byte(keys[s])) { // a seek to the merge's own key
						check(fmt.Sprintf("seek to Key() %q in %s", keys[s], what), m, m.SeekGE(m.Key()), s, b)
					}
				}
				check("seek before "+what, m, m.SeekGE([]byte("a")), a, b)
			}
		})
	}
}

// Writers commit at once, each its own keys, while a reader settles and
// merges what is written so far (as the document join reads while its
// writers write); a reader made after they flushed sees every entry.
func TestRunStoreConcurrentWriters(t *testing.T) {
	rs, err := openRunStore(filepath.Join(t.TempDir(), "ordered"), 256<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.close()
	const writers, each = 4, 5000
	done, readErr := make(chan struct{}), make(chan error, 1)
	go func() {
		for reads := 0; ; reads++ {
			select {
			case <-done:
				readErr <- nil
				return
			default:
			}
			runs, err := rs.settle()
			if err != nil {
				readErr <- err
				return
			}
			m := newRunMerge(runs, []byte("o\x00"), []byte("o\x01"))
			var prev []byte
			for ok := m.First(); ok; ok = m.Next() {
				if prev != nil && bytes.Compare(prev, m.Key()) >= 0 {
					readErr <- fmt.Errorf("read %d: %q after %q", reads, m.Key(), prev)
					return
				}
				prev = append(prev[:0], m.Key()...)
			}
			if m.Error() != nil {
				readErr <- m.Error()
				return
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newChunk()
			for i := range each {
				c.add(fmt.Appendf(nil, "o\x00%08d-%d", i, w), fmt.Appendf(nil, "%d/%d", w, i))
				if i%500 == 499 {
					if err := rs.commit(c); err != nil {
						errs <- err
						return
					}
					c = newChunk()
				}
			}
			errs <- rs.commit(c)
		}()
	}
	wg.Wait()
	close(done)
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	runs, err := rs.settle()
	if err != nil {
		t.Fatal(err)
	}
	m := newRunMerge(runs, []byte("o\x00"), []byte("o\x01"))
	n := 0
	var prev []byte
	for ok := m.First(); ok; ok = m.Next() {
		k := m.Key()
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			t.Fatalf("%q after %q", k, prev)
		}
		var i, w int
		if _, err := fmt.Sscanf(string(k[2:]), "%08d-%d", &i, &w); err != nil || string(m.Value()) != fmt.Sprintf("%d/%d", w, i) {
			t.Fatalf("%q = %q", k, m.Value())
		}
		prev = append(prev[:0], k...)
		n++
	}
	if m.Error() != nil || n != writers*each {
		t.Fatalf("read %d entries back (err %v), wrote %d", n, m.Error(), writers*each)
	}
}
