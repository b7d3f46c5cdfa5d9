package kv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/productdata/pds/internal/fuzzseed"
)

// writePoints writes a point index of the given keys (in order) and values.
func writePoints(t testing.TB, path string, keys, values [][]byte) {
	t.Helper()
	w, err := createPoints(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range keys {
		if err := w.add(keys[i], values[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
}

// Every key written reads back its value, from the mapped index and from one
// read into memory (the way in where mmap is missing), whatever the number
// of entries (no bucket bits, several entries a bucket, about one); keys not
// written, including ones that differ from a written key in their last byte,
// are absent.
func TestPointsReadBack(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 100, 5000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			var keys, values [][]byte
			for i := range n {
				keys = append(keys, AppendViewKey(nil, TagIdentity, fmt.Sprintf("gtin:%014d", i*7), ""))
				values = append(values, bytes.Repeat([]byte{byte(i)}, rng.IntN(300)))
			}
			path := filepath.Join(t.TempDir(), "points")
			writePoints(t, path, keys, values)
			p, err := openPoints(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer p.close()
			checkPointsReadBack(t, p, keys, values)
			checkPointsReadBack(t, openPointsInMemory(t, path), keys, values)
		})
	}
}

// openPointsInMemory opens the point index at path the way a platform
// without mmap does: read into memory by readWhole.
func openPointsInMemory(t *testing.T, path string) *points {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	b, err := readWhole(f, int(st.Size()))
	if err != nil {
		t.Fatal(err)
	}
	p, err := readPoints(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func checkPointsReadBack(t *testing.T, p *points, keys, values [][]byte) {
	t.Helper()
	n := len(keys)
	if p.count != uint64(n) || 1<<p.bits < n {
		t.Errorf("count %d, bits %d for %d entries", p.count, p.bits, n)
	}
	for i, k := range keys {
		v, ok, err := p.get(k, []byte("pre"))
		if err != nil || !ok || string(v) != "pre"+string(values[i]) {
			t.Fatalf("key %q: %v %v, %d bytes", k, ok, err, len(v))
		}
	}
	for i := range n + 10 {
		for _, k := range [][]byte{
			AppendViewKey(nil, TagIdentity, fmt.Sprintf("gtin:%014d", i*7+1), ""),
			AppendViewKey(nil, TagIdentity, fmt.Sprintf("gtin:%014d", i*7), "t1"),
			AppendViewKey(nil, TagPassport, fmt.Sprintf("gtin:%014d", i*7), ""),
		} {
			if v, ok, err := p.get(k, nil); ok || err != nil || len(v) != 0 {
				t.Fatalf("absent key %q: %v %v %q", k, ok, err, v)
			}
		}
	}
}

// Entries of one bucket that share a hash are told apart by their keys: a
// hand-made index lists two records under the hash of the first, the other
// record's entry first. The first key is found past the second's record.
func TestPointsSameHash(t *testing.T) {
	a, b := []byte("i\x00gtin:1\x00"), []byte("i\x00gtin:2\x00")
	var data []byte
	rec := func(k, v []byte) uint64 {
		off := uint64(len(data))
		data = binary.AppendUvarint(data, uint64(len(k)))
		data = binary.AppendUvarint(data, uint64(len(v)))
		data = append(append(data, k...), v...)
		return off
	}
	offA, offB := rec(a, []byte("A")), rec(b, []byte("B"))
	for len(data)%8 != 0 {
		data = append(data, 0)
	}
	h := xxhash.Sum64(a)
	m := make([]byte, pointsHeaderSize)
	copy(m, pointsMagic)
	m = append(m, data...)
	for _, off := range []uint64{offB, offA} {
		m = binary.LittleEndian.AppendUint64(m, h)
		m = binary.LittleEndian.AppendUint64(m, off)
	}
	bits := uint64(1)
	for bk := uint64(0); bk <= 1<<bits; bk++ {
		n := uint32(0)
		if bk > bucket(h, bits) {
			n = 2
		}
		m = binary.LittleEndian.AppendUint32(m, n)
	}
	le := binary.LittleEndian
	le.PutUint64(m[8:], 2)
	le.PutUint64(m[16:], bits)
	le.PutUint64(m[24:], uint64(len(data)))
	le.PutUint64(m[32:], uint64(len(m)))
	p, err := readPoints(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, err := p.get(a, nil); !ok || err != nil || string(v) != "A" {
		t.Errorf("a: %v %v %q", ok, err, v)
	}
	// b's entry holds a's hash: a probe by b's own hash does not find it.
	if _, ok, err := p.get(b, nil); ok || err != nil {
		t.Errorf("b: %v %v", ok, err)
	}
}

// A file that is not a whole point index is refused when opened: each case
// breaks one thing of a good file.
func TestPointsRefused(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	var keys, values [][]byte
	for i := range 50 {
		keys = append(keys, AppendViewKey(nil, TagIdentity, fmt.Sprintf("gtin:%014d", i), ""))
		values = append(values, []byte(fmt.Sprint("value ", i)))
	}
	writePoints(t, good, keys, values)
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	dataLen := le.Uint64(orig[24:])
	radixAt := pointsHeaderSize + dataLen + 50*pointEntrySize
	tests := []struct {
		name   string
		mangle func([]byte) []byte
	}{
		{"empty", func([]byte) []byte { return nil }},
		{"magic", func(b []byte) []byte { b[0] = 'x'; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-4] }},
		{"longer", func(b []byte) []byte { return append(b, 0, 0, 0, 0) }},
		{"count", func(b []byte) []byte { le.PutUint64(b[8:], 51); return b }},
		{"bits", func(b []byte) []byte { le.PutUint64(b[16:], 40); return b }},
		{"data length", func(b []byte) []byte { le.PutUint64(b[24:], dataLen+8); return b }},
		{"size", func(b []byte) []byte { le.PutUint64(b[32:], 1<<62); return b }},
		{"radix order", func(b []byte) []byte { le.PutUint32(b[radixAt+4:], 49); return b }},
		{"radix end", func(b []byte) []byte { le.PutUint32(b[len(b)-4:], 49); return b }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, tc.mangle(bytes.Clone(orig)), 0o644); err != nil {
				t.Fatal(err)
			}
			if p, err := openPoints(path, nil); err == nil {
				p.close()
				t.Fatal("opened")
			}
		})
	}
	if p, err := openPoints(good, nil); err != nil {
		t.Fatalf("the good file: %v", err)
	} else {
		p.close()
	}
}

// A record offset past the data is an internal error of the read, not a
// panic (the manifest's checksums keep such a file from being served).
func TestPointsBadOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "points")
	key := AppendViewKey(nil, TagIdentity, "gtin:1", "")
	writePoints(t, path, [][]byte{key}, [][]byte{[]byte("v")})
	b, _ := os.ReadFile(path)
	dataLen := binary.LittleEndian.Uint64(b[24:])
	binary.LittleEndian.PutUint64(b[pointsHeaderSize+dataLen+8:], dataLen+100)
	p, err := readPoints(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := p.get(key, nil); ok || err == nil {
		t.Errorf("%v %v, want an error", ok, err)
	}
}

// FuzzPoints reads arbitrary bytes as a point index: it is refused, or every
// read of it ends in a value, an absence or an error, never a panic or a
// read outside it.
func FuzzPoints(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed")
	writePoints(f, path, [][]byte{[]byte("i\x00a\x00"), []byte("i\x00b\x00")}, [][]byte{[]byte("1"), []byte("22")})
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	// The same file with the first entry's offset past the data.
	badOffset := bytes.Clone(good)
	dataLen := binary.LittleEndian.Uint64(good[24:])
	binary.LittleEndian.PutUint64(badOffset[pointsHeaderSize+dataLen+8:], dataLen+1)
	empty := filepath.Join(f.TempDir(), "empty")
	writePoints(f, empty, nil, nil)
	none, err := os.ReadFile(empty)
	if err != nil {
		f.Fatal(err)
	}
	fuzzseed.Seed(f,
		[]any{good, []byte("i\x00a\x00")},
		[]any{good, []byte("i\x00c\x00")},
		[]any{badOffset, []byte("i\x00b\x00")},
		[]any{none, []byte("")},
		[]any{good[:pointsHeaderSize], []byte("i\x00a\x00")},
	)
	f.Fuzz(func(t *testing.T, b, key []byte) {
		p, err := readPoints(b, nil)
		if err != nil {
			return
		}
		for _, k := range [][]byte{key, []byte("i\x00a\x00"), []byte("i\x00b\x00")} {
			v, ok, err := p.get(k, nil)
			if !ok && len(v) != 0 || ok && err != nil {
				t.Fatalf("%q: %v %v %q", k, ok, err, v)
			}
		}
	})
}

// The Builder writes a point index only when asked before its first Set,
// and leaves none behind when the build is aborted.
func TestBuilderPoints(t *testing.T) {
	dir := t.TempDir()
	b, err := NewBuilder(filepath.Join(dir, "store"), filepath.Join(dir, "sst"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Set(AppendViewKey(nil, TagIdentity, "gtin:1", ""), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := b.WritePoints(filepath.Join(dir, "late")); err == nil {
		t.Error("WritePoints after Set was accepted")
	}
	b.Abort()

	dir = t.TempDir()
	path := filepath.Join(dir, "points", "identity")
	b, err = NewBuilder(filepath.Join(dir, "store"), filepath.Join(dir, "sst"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WritePoints(path); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(AppendViewKey(nil, TagIdentity, "gtin:1", ""), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the index is not being written: %v", err)
	}
	b.Abort()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("an aborted build left its point index: %v", err)
	}
}
