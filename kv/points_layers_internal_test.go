package kv

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writePointsLayer writes a layer on the point index below (of version 3)
// at path: keys in order, each with its value (an encoded view, stored by
// below's shapes), or nil, a deletion.
func writePointsLayer(t testing.TB, path string, below *points, keys, values [][]byte) {
	t.Helper()
	w, err := createPoints(path)
	if err != nil {
		t.Fatal(err)
	}
	w.layer = true
	if err := w.setDict(below.dictRaw, 3); err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if values[i] == nil {
			err = w.add(k, nil, 0)
		} else {
			err = w.add(k, encodeShaped(below.shapes, string(subjectOfKey(k)), values[i]), len(values[i]))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
}

// A point index with layers answers every key as the newest file that holds
// it says, a deletion answering "absent", however it is read (mapped, with
// pread); its scan gives each key the stack holds once, in key order, with
// that value; keys of no file are absent.
func TestPointLayersAnswerNewestFirst(t *testing.T) {
	basePath, keys, values := identityPoints(t, 300)
	want := map[string][]byte{}
	for i, k := range keys {
		want[string(k)] = values[i]
	}
	dir := filepath.Dir(basePath)
	base, err := openPoints(basePath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer base.close()
	view := func(subject string, night int) []byte {
		return AppendView(nil, View{Body: []byte(fmt.Sprintf(`{"subject":"%s","n":%d}`, subject, 1000*night))})
	}
	key := func(i int) []byte { return AppendViewKey(nil, TagIdentity, fmt.Sprintf("gtin:%014d", i), "") }
	// Each night changes a tenth of the base's products, deletes a tenth,
	// adds new ones between them, and undoes some of the night before's:
	// a product deleted comes back, one added is deleted.
	var paths []string
	all := maps.Clone(want)
	for night := 1; night <= 3; night++ {
		change := map[string][]byte{}
		for i := range 300 {
			subject := fmt.Sprintf("gtin:%014d", i*7)
			switch (i + night) % 10 {
			case 0:
				change[string(key(i*7))] = view(subject, night)
			case 1:
				change[string(key(i*7))] = nil
			case 2:
				if _, ok := want[string(key(i*7))]; !ok {
					change[string(key(i*7))] = view(subject, night) // deleted before: back
				}
			}
			if i%20 == night {
				added := fmt.Sprintf("gtin:%014d", i*7+night)
				change[string(key(i*7+night))] = view(added, night)
			}
			if i%20 == night-1 && night > 1 {
				change[string(key(i*7+night-1))] = nil // added the night before
			}
		}
		ks := slices.Sorted(maps.Keys(change))
		var lk, lv [][]byte
		for _, k := range ks {
			lk, lv = append(lk, []byte(k)), append(lv, change[k])
			if change[k] == nil {
				delete(want, k)
			} else {
				want[k] = change[k]
			}
			all[k] = nil
		}
		path := filepath.Join(dir, fmt.Sprintf("layer%d", night))
		writePointsLayer(t, path, base, lk, lv)
		paths = append(paths, path)
	}
	for _, mode := range []string{"mapped", "pread"} {
		open := openPoints
		if mode == "pread" {
			open = readPointsFile
		}
		s := &pointStack{}
		for _, p := range append([]string{basePath}, paths...) {
			f, err := open(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer f.close()
			s.files = append(s.files, f)
		}
		if !s.files[1].layer || s.files[0].layer {
			t.Fatalf("%s: the layers are not read as layers", mode)
		}
		for k := range all {
			for _, probe := range [][]byte{[]byte(k), append([]byte(k), 'x')} {
				s.touch([][]byte{probe})
				got, ok, err := s.get(probe, []byte("pre"))
				w, has := want[string(probe)]
				if err != nil || ok != has || has && !bytes.Equal(got, append([]byte("pre"), w...)) || !has && string(got) != "pre" {
					t.Fatalf("%s: %q: got %q %v %v, want %q %v", mode, probe, got, ok, err, w, has)
				}
			}
		}
		var scanned []string
		err := s.scan(func(k, v []byte) error {
			if w, ok := want[string(k)]; !ok || !bytes.Equal(v, w) {
				return fmt.Errorf("scanned %q = %q, want %q (%v)", k, v, w, ok)
			}
			scanned = append(scanned, string(k))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if !slices.IsSorted(scanned) || len(slices.Compact(slices.Clone(scanned))) != len(scanned) || len(scanned) != len(want) {
			t.Errorf("%s: scanned %d keys (sorted %v), want %d, each once", mode, len(scanned), slices.IsSorted(scanned), len(want))
		}
	}
}

// A store takes a layer on its point index only when it is one: a file
// written whole, or a layer whose dictionary is not its index's, is refused;
// and a layer is never taken for the index itself.
func TestPointsLayerRefusedUnlessItIsOne(t *testing.T) {
	dir := t.TempDir()
	buildTestStore(t, dir, 50, 0)
	other := t.TempDir()
	buildTestStore(t, other, 80, 0)
	st, err := Open(filepath.Join(dir, "store"), 1<<20, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.UsePoints(filepath.Join(dir, "points"), nil); err != nil {
		t.Fatal(err)
	}
	otherShapes, _, _ := identityPoints(t, 10) // views of another shape
	theirs, err := openPoints(otherShapes, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.close()
	foreign := filepath.Join(t.TempDir(), "layer")
	writePointsLayer(t, foreign, theirs, [][]byte{AppendViewKey(nil, TagIdentity, "gtin:1", "")}, [][]byte{nil})
	for name, path := range map[string]string{
		"an index written whole":                filepath.Join(other, "points"),
		"a layer of another index's dictionary": foreign,
	} {
		if err := st.AddPointsLayer(path, nil); err == nil || !strings.Contains(err.Error(), "not a layer of the point index below it") {
			t.Errorf("%s: %v", name, err)
		}
	}
	fresh, err := Open(filepath.Join(other, "store"), 1<<20, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.UsePoints(foreign, nil); err == nil || !strings.Contains(err.Error(), "a night's layer") {
		t.Errorf("a layer opened as the index: %v", err)
	}
}
