package kv

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/s2"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/internal/fuzzseed"
	"github.com/productdata/pds/internal/osfile"
	"github.com/productdata/pds/kv/jsonshape"
)

// writePoints writes a point index of the given keys (in order) and
// values: of version 3 (kind "v3": values that are encoded views, stored by
// shape with a table trained on their bodies) or version 2 (kind "v2", or
// "v2 dict" compressed with an s2 dictionary made of the values).
func writePoints(t testing.TB, path string, keys, values [][]byte, kind string) {
	t.Helper()
	w, err := createPoints(path)
	if err != nil {
		t.Fatal(err)
	}
	if kind == "v3" {
		var bodies [][]byte
		for _, v := range values {
			view, err := DecodeView(v)
			if err != nil {
				t.Fatalf("value %q is no view: %v", v, err)
			}
			bodies = append(bodies, view.Body)
		}
		table := jsonshape.Train(bodies)
		if err := w.setDict(table.Bytes(), 3); err != nil {
			t.Fatal(err)
		}
		for i := range keys {
			if err := w.add(keys[i], encodeShaped(table, string(subjectOfKey(keys[i])), values[i]), len(values[i])); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.finish(); err != nil {
			t.Fatal(err)
		}
		return
	}
	var d *s2.Dict
	if kind == "v2 dict" {
		if d = s2.MakeDict(slices.Concat([]byte(`{"subject":"gtin:00000000000000","n":0}`), slices.Concat(values...)), nil); d == nil {
			t.Fatal("no dictionary made")
		}
		if err := w.setDict(d.Bytes(), 2); err != nil {
			t.Fatal(err)
		}
	}
	for i := range keys {
		v := s2.EncodeBetter(nil, values[i])
		if d != nil {
			v = d.EncodeBetter(nil, values[i])
		}
		if err := w.add(keys[i], v, len(values[i])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
}

// identityPoints writes a point index of n identity views, of subjects
// gtin:0, gtin:7, gtin:14, … (so that a key between two is absent), with a
// dictionary, and returns its path, keys and values.
func identityPoints(t testing.TB, n int) (path string, keys, values [][]byte) {
	t.Helper()
	for i := range n {
		keys = append(keys, AppendViewKey(nil, TagIdentity, fmt.Sprintf("gtin:%014d", i*7), ""))
		values = append(values, AppendView(nil, View{Body: []byte(fmt.Sprintf(`{"subject":"gtin:%014d","n":%d}`, i*7, i))}))
	}
	path = filepath.Join(t.TempDir(), "points")
	writePoints(t, path, keys, values, "v3")
	return path, keys, values
}

// pointsV1 is a point index of version 1 (snapshot format 2), as that pds
// wrote it: values stored as they are, no dictionary.
func pointsV1(keys, values [][]byte) []byte {
	var data []byte
	var entries []pointEntry
	for i, k := range keys {
		entries = append(entries, pointEntry{xxhash.Sum64(k), uint64(len(data))})
		data = binary.AppendUvarint(data, uint64(len(k)))
		data = binary.AppendUvarint(data, uint64(len(values[i])))
		data = append(append(data, k...), values[i]...)
	}
	for len(data)%8 != 0 {
		data = append(data, 0)
	}
	slices.SortFunc(entries, func(a, b pointEntry) int {
		if a.hash != b.hash {
			return cmpU64(a.hash, b.hash)
		}
		return cmpU64(a.off, b.off)
	})
	m := make([]byte, pointsHeaderSize)
	copy(m, pointsMagicV1)
	m = append(m, data...)
	for _, e := range entries {
		m = binary.LittleEndian.AppendUint64(m, e.hash)
		m = binary.LittleEndian.AppendUint64(m, e.off)
	}
	bits := pointsBits(len(entries))
	i := 0
	for bk := uint64(0); bk <= 1<<bits; bk++ {
		for i < len(entries) && bucket(entries[i].hash, bits) < bk {
			i++
		}
		m = binary.LittleEndian.AppendUint32(m, uint32(i))
	}
	le := binary.LittleEndian
	le.PutUint64(m[8:], uint64(len(entries)))
	le.PutUint64(m[16:], bits)
	le.PutUint64(m[24:], uint64(len(data)))
	le.PutUint64(m[32:], uint64(len(m)))
	return m
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// openEach opens the point index at path every way it is read: mapped, read
// into memory (where mmap is missing), and with pread (version 2 only).
func openEach(t *testing.T, path string) map[string]*points {
	t.Helper()
	out := map[string]*points{}
	p, err := openPoints(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	out["mapped"] = p
	if p.version >= 2 {
		if out["pread"], err = readPointsFile(path, nil); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range out {
			p.close()
		}
	})
	// Read into memory, as where mmap is missing: nothing to close.
	withMemory := maps.Clone(out)
	withMemory["in memory"] = openPointsInMemory(t, path)
	return withMemory
}

// Every key written reads back its value, whatever the number of entries
// (no bucket bits, several entries a bucket, about one), the version of the
// file, its dictionary and how it is read; keys not written, including ones
// that differ from a written key in their last byte, are absent.
func TestPointsReadBack(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 100, 5000} {
		for _, kind := range []string{"v3", "v2", "v2 dict", "v1"} {
			t.Run(fmt.Sprint(n, " ", kind), func(t *testing.T) {
				if kind == "v2 dict" && n == 0 {
					t.Skip("no values to make a dictionary of")
				}
				rng := rand.New(rand.NewPCG(1, uint64(n)))
				var keys, values [][]byte
				for i := range n {
					keys = append(keys, AppendViewKey(nil, TagIdentity, fmt.Sprintf("gtin:%014d", i*7), ""))
					values = append(values, []byte(fmt.Sprintf(`{"subject":"gtin:%014d","n":%d}`, i*7, rng.IntN(1000)))[:rng.IntN(40)])
					if kind == "v3" {
						values[i] = AppendView(nil, View{Body: values[i]})
					}
				}
				path := filepath.Join(t.TempDir(), "points")
				if kind == "v1" {
					if err := os.WriteFile(path, pointsV1(keys, values), 0o644); err != nil {
						t.Fatal(err)
					}
				} else {
					writePoints(t, path, keys, values, kind)
				}
				for mode, p := range openEach(t, path) {
					if p.count != uint64(n) || 1<<p.bits < n {
						t.Errorf("%s: count %d, bits %d for %d entries", mode, p.count, p.bits, n)
					}
					for i, k := range keys {
						if i%prefetchWindow == 0 { // loads memory, changes no answer
							p.touch(keys[i:min(i+prefetchWindow, n)])
						}
						v, ok, err := p.get(k, []byte("pre"))
						if err != nil || !ok || string(v) != "pre"+string(values[i]) {
							t.Fatalf("%s: key %q: %v %v, %q", mode, k, ok, err, v)
						}
					}
					for i := range n + 10 {
						absent := [][]byte{
							AppendViewKey(nil, TagIdentity, fmt.Sprintf("gtin:%014d", i*7+1), ""),
							AppendViewKey(nil, TagIdentity, fmt.Sprintf("gtin:%014d", i*7), "t1"),
							AppendViewKey(nil, TagPassport, fmt.Sprintf("gtin:%014d", i*7), ""),
							nil,
						}
						p.touch(absent)
						for _, k := range absent[:3] {
							if v, ok, err := p.get(k, nil); ok || err != nil || len(v) != 0 {
								t.Fatalf("%s: absent key %q: %v %v %q", mode, k, ok, err, v)
							}
						}
					}
					var scanned int
					err := p.scan(func(k, v []byte) error {
						if string(k) != string(keys[scanned]) || string(v) != string(values[scanned]) {
							return fmt.Errorf("record %d: %q %q", scanned, k, v)
						}
						scanned++
						return nil
					})
					if err != nil || scanned != n {
						t.Errorf("%s: scan: %v, %d of %d records", mode, err, scanned, n)
					}
				}
			})
		}
	}
}

// openPointsInMemory opens the point index at path the way a platform
// without mmap does: read into memory by osfile.ReadWhole.
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
	b, err := osfile.ReadWhole(f, int(st.Size()))
	if err != nil {
		t.Fatal(err)
	}
	p, err := readPoints(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
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
	copy(m, pointsMagicV1)
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

// A file that is not a whole point index is refused when opened, mapped or
// read with pread: each case breaks one thing of a good file.
func TestPointsRefused(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	var keys, values [][]byte
	for i := range 50 {
		keys = append(keys, AppendViewKey(nil, TagIdentity, fmt.Sprintf("gtin:%014d", i), ""))
		values = append(values, AppendView(nil, View{Body: []byte(fmt.Sprint("value ", i))}))
	}
	writePoints(t, good, keys, values, "v3")
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	dataLen, dictLen := le.Uint64(orig[24:]), le.Uint64(orig[40:])
	radixAt := pointsHeaderSize + pad8(dictLen) + dataLen + 50*pointEntrySize
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
		{"dictionary length", func(b []byte) []byte { le.PutUint64(b[40:], dictLen+8); return b }},
		{"dictionary length past the file", func(b []byte) []byte { le.PutUint64(b[40:], 1<<63); return b }},
		{"dictionary", func(b []byte) []byte { b[pointsHeaderSize] = 0xff; return b }},
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
				t.Error("opened mapped")
			}
			if p, err := readPointsFile(path, nil); err == nil {
				p.close()
				t.Error("opened with pread")
			}
		})
	}
	openEach(t, good)
}

// Reads of a damaged record are internal errors, not panics, and never
// decode more than the header's longest value (the manifest's checksums keep
// such a file from being served): a record offset past the data, a value
// longer than the header says any is.
func TestPointsBadRecords(t *testing.T) {
	key := AppendViewKey(nil, TagIdentity, "gtin:1", "")
	path := filepath.Join(t.TempDir(), "points")
	writePoints(t, path, [][]byte{key}, [][]byte{[]byte("a value of some length")}, "v2")
	orig, _ := os.ReadFile(path)
	le := binary.LittleEndian
	dataLen := le.Uint64(orig[24:])
	for name, mangle := range map[string]func([]byte){
		"offset":       func(b []byte) { le.PutUint64(b[pointsHeaderSize+dataLen+8:], dataLen+100) },
		"longest":      func(b []byte) { le.PutUint64(b[48:], 3) },
		"record bound": func(b []byte) { le.PutUint64(b[56:], 4) },
	} {
		t.Run(name, func(t *testing.T) {
			b := bytes.Clone(orig)
			mangle(b)
			p, err := readPoints(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			if v, ok, err := p.get(key, nil); ok || err == nil {
				t.Errorf("%v %v %q, want an error", ok, err, v)
			}
		})
	}
}

// FuzzPoints reads arbitrary bytes as a point index, mapped and with pread:
// it is refused, or every read and scan of it ends in a value, an absence or
// an error, never a panic or a read outside it.
func FuzzPoints(f *testing.F) {
	dir := f.TempDir()
	keys := [][]byte{[]byte("i\x00a\x00"), []byte("i\x00b\x00")}
	values := [][]byte{[]byte(`{"subject":"a"}`), []byte(`{"subject":"b","more":"22"}`)}
	seed := func(name string, kind string) []byte {
		path := filepath.Join(dir, name)
		vs := values
		if kind == "v3" {
			vs = [][]byte{AppendView(nil, View{Body: values[0]}), AppendView(nil, View{Body: values[1]})}
		}
		writePoints(f, path, keys, vs, kind)
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	good, dict, shaped := seed("good", "v2"), seed("dict", "v2 dict"), seed("shaped", "v3")
	// The same file with the first entry's offset past the data.
	badOffset := bytes.Clone(good)
	dataLen := binary.LittleEndian.Uint64(good[24:])
	binary.LittleEndian.PutUint64(badOffset[pointsHeaderSize+dataLen+8:], dataLen+1)
	none := seed("none", "v2")
	v1 := pointsV1(keys, values)
	// A layer on shaped: the first key changed, the second deleted.
	below, err := openPoints(filepath.Join(dir, "shaped"), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { below.close() })
	writePointsLayer(f, filepath.Join(dir, "layer"), below, keys, [][]byte{AppendView(nil, View{Body: values[1]}), nil})
	layer, err := os.ReadFile(filepath.Join(dir, "layer"))
	if err != nil {
		f.Fatal(err)
	}
	fuzzseed.Seed(f,
		[]any{good, []byte("i\x00a\x00")},
		[]any{good, []byte("i\x00c\x00")},
		[]any{dict, []byte("i\x00b\x00")},
		[]any{shaped, []byte("i\x00b\x00")},
		[]any{badOffset, []byte("i\x00b\x00")},
		[]any{none, []byte("")},
		[]any{good[:pointsHeaderSize], []byte("i\x00a\x00")},
		[]any{v1, []byte("i\x00a\x00")},
		[]any{layer, []byte("i\x00b\x00")},
	)
	path := filepath.Join(dir, "fuzzed")
	f.Fuzz(func(t *testing.T, b, key []byte) {
		p, err := readPoints(b, nil)
		if err != nil {
			return
		}
		each := []*points{p}
		if p.version >= 2 {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			pr, err := readPointsFile(path, nil)
			if err != nil {
				t.Fatalf("opened mapped, refused with pread: %v", err)
			}
			defer pr.close()
			each = append(each, pr)
		}
		for _, p := range each {
			p.touch([][]byte{key, keys[0], keys[1]})
			for _, k := range [][]byte{key, keys[0], keys[1]} {
				v, ok, err := p.get(k, nil)
				if !ok && len(v) != 0 || ok && err != nil || uint64(len(v)) > max(p.maxValue, uint64(len(b))) {
					t.Fatalf("%q: %v %v %q", k, ok, err, v)
				}
			}
			p.scan(func(k, v []byte) error { return nil })
			if p.layer && p.mapped != nil { // read as a layer on shaped (mapped, as it is), too
				st := &pointStack{files: []*points{below, p}}
				for _, k := range [][]byte{key, keys[0], keys[1]} {
					if v, ok, err := st.get(k, nil); !ok && len(v) != 0 || ok && err != nil {
						t.Fatalf("through the layer, %q: %v %v %q", k, ok, err, v)
					}
				}
				st.scan(func(k, v []byte) error { return nil })
			}
		}
	})
}

// The Builder writes a point index only when asked before Train and its
// first Set, refuses identity views before Train, and leaves no index behind
// when the build is aborted.
func TestBuilderPoints(t *testing.T) {
	dir := t.TempDir()
	b, err := NewBuilder(filepath.Join(dir, "store"), filepath.Join(dir, "sst"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Set(AppendViewKey(nil, TagIdentity, "gtin:1", ""), []byte("v")); err == nil {
		t.Error("an identity view before Train was accepted")
	}
	if err := b.Train(Samples{}); err == nil {
		t.Error("Train before WritePoints was accepted")
	}
	if err := b.Set(Key(TagAlias, "gtin:1"), []byte("gtin:1\x00")); err != nil {
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
	if err := b.Train(Samples{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(AppendViewKey(nil, TagIdentity, "gtin:1", ""), b.Encoder().Identity("gtin:1", AppendView(nil, View{Body: []byte("v")}))); err != nil {
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

// A batch of probes (probes and probe, as Identities reads) answers each key
// as get does, however the index is read; on a mapping whose file was cut
// short after it was opened, the batch ends with an error of a damaged
// index, not a crash.
func TestPointsProbes(t *testing.T) {
	path, keys, _ := identityPoints(t, 3000)
	for mode, p := range openEach(t, path) {
		err := p.probes(func(buf *[]byte) error {
			for i, k := range keys {
				absent := AppendViewKey(nil, TagIdentity, fmt.Sprintf("gtin:%014d", i*7+1), "")
				for _, k := range [][]byte{k, absent} {
					want, wantOK, wantErr := p.get(k, []byte("pre"))
					got, ok, err := p.probe(k, []byte("pre"), buf)
					if string(got) != string(want) || ok != wantOK || err != nil || wantErr != nil {
						return fmt.Errorf("key %q: %q %v %v, get gives %q %v %v", k, got, ok, err, want, wantOK, wantErr)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", mode, err)
		}
	}

	if !osfile.Maps {
		return // read into memory: a file cut short after opening changes nothing read
	}
	p, err := openPoints(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if err := os.Truncate(path, 10); err != nil {
		t.Fatal(err)
	}
	err = p.probes(func(buf *[]byte) error {
		for _, k := range keys {
			if _, _, err := p.probe(k, nil, buf); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, domain.ErrDamaged) {
		t.Fatalf("probes of a file cut short: %v", err)
	}
}

// checkLog is a PointsGuard that vouches for every byte and records the
// ranges it was asked about.
type checkLog struct{ ranges [][2]int64 }

func (g *checkLog) Check(_ []byte, off, n int64) error {
	g.ranges = append(g.ranges, [2]int64{off, off + n})
	return nil
}

func (g *checkLog) ReadAt(r io.ReaderAt, p []byte, off int64) (int, error) {
	g.ranges = append(g.ranges, [2]int64{off, off + int64(len(p))})
	return r.ReadAt(p, off)
}

func (g *checkLog) Unchanged(os.FileInfo, error) error { return nil }

// Opening a mapped point index under a guard asks the guard for none of
// its radix, which would read it all from disk (64 MiB at ten million
// products); each probe asks for its own slot, before it reads it.
func TestMappedRadixCheckedSlotBySlot(t *testing.T) {
	path, keys, values := identityPoints(t, 5000)
	g := &checkLog{}
	p, err := openPoints(path, g)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	radix := int64(p.radixAt())
	for _, r := range g.ranges {
		if r[1] > radix {
			t.Fatalf("opening checked [%d, %d), inside the radix at %d", r[0], r[1], radix)
		}
	}
	for _, i := range []int{0, 1234, 4999} {
		g.ranges = nil
		v, ok, err := p.get(keys[i], nil)
		if err != nil || !ok || string(v) != string(values[i]) {
			t.Fatalf("get %s: %q %v %v", keys[i], v, ok, err)
		}
		slot := radix + int64(bucket(xxhash.Sum64(keys[i]), p.bits))*4
		if len(g.ranges) == 0 || g.ranges[0] != [2]int64{slot, slot + 8} {
			t.Errorf("get %s: first checked %v, want its radix slot [%d, %d)", keys[i], g.ranges, slot, slot+8)
		}
	}
}

// sortEntries gives the order of one sort by hash and then offset, for
// hashes spread over the whole range, crowded into one group, and equal.
func TestSortEntriesOrdersByHashThenOffset(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := map[string]func(i int) uint64{
		"spread":      func(int) uint64 { return rng.Uint64() },
		"one group":   func(int) uint64 { return 0xabcd<<48 | rng.Uint64()>>40 },
		"equal":       func(int) uint64 { return 42 },
		"a few known": func(i int) uint64 { return uint64(i%7) << 60 },
	}
	for name, hash := range cases {
		for _, n := range []int{0, 1, 2, 1000, 70000} {
			es := make([]pointEntry, n)
			for i := range es {
				es[i] = pointEntry{hash: hash(i), off: uint64(rng.IntN(n + 1))}
			}
			want := slices.Clone(es)
			slices.SortFunc(want, func(a, b pointEntry) int {
				return cmp.Or(cmp.Compare(a.hash, b.hash), cmp.Compare(a.off, b.off))
			})
			sortEntries(es)
			if !slices.Equal(es, want) {
				t.Errorf("%s, %d entries: not in order", name, n)
			}
		}
	}
}

func BenchmarkSortEntries(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]pointEntry, 1_000_000)
	for i := range src {
		src[i] = pointEntry{hash: rng.Uint64(), off: uint64(i) * 90}
	}
	es := make([]pointEntry, len(src))
	for _, c := range []struct {
		name string
		sort func([]pointEntry)
	}{
		{"flag", sortEntries},
		{"whole", func(es []pointEntry) {
			slices.SortFunc(es, func(a, b pointEntry) int {
				return cmp.Or(cmp.Compare(a.hash, b.hash), cmp.Compare(a.off, b.off))
			})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				copy(es, src)
				c.sort(es)
			}
		})
	}
}
