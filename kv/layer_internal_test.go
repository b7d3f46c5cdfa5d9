package kv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
)

// A night's change to the test store of buildTestStore: product 5's views
// change, product 10 loses its tenant view, product 20 is gone and product
// n is new. night varies the changed content from layer to layer.
type testNight struct {
	n, night int
}

func (c testNight) views(i int, tenant string) (identity, passport, evidence []byte, ok bool) {
	switch {
	case i == 20 || i == 10 && tenant == "t1":
		return nil, nil, nil, false
	case i == 5:
		id, p, e := testViews(i+1000*c.night, tenant)
		return id, p, e, true
	}
	id, p, e := testViews(i, tenant)
	return id, p, e, true
}

// buildTestLayer writes the night's layer on the store under base into dir:
// Sets of what changed, Deletes of what is gone, the point index whole.
func buildTestLayer(t testing.TB, base, dir string, c testNight) {
	t.Helper()
	st, err := Open(filepath.Join(base, "store"), 1<<20, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.UsePoints(filepath.Join(base, "points"), nil); err != nil {
		t.Fatal(err)
	}
	dicts, err := st.Dictionaries()
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewLayer(filepath.Join(dir, "store"), filepath.Join(dir, "sst"), filepath.Join(base, "store"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WritePoints(filepath.Join(dir, "points")); err != nil {
		t.Fatal(err)
	}
	if err := b.TrainWith(dicts); err != nil {
		t.Fatal(err)
	}
	enc := b.Encoder()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	subject := func(i int) string { return fmt.Sprintf("gtin:%014d", i) }
	// Table by table, in key order.
	for i := 0; i <= c.n; i++ {
		switch i {
		case 20:
			must(b.Delete(Key(TagAlias, subject(i))))
		case c.n:
			must(b.Set(Key(TagAlias, subject(i)), AppendAlias(nil, Alias{Subject: subject(i)})))
		}
	}
	for i := 0; i <= c.n; i++ {
		for _, tenant := range []string{"", "t1"} {
			if tenant == "t1" && i%10 != 0 {
				continue
			}
			if id, _, _, ok := c.views(i, tenant); ok {
				must(b.Set(AppendViewKey(nil, TagIdentity, subject(i), tenant), enc.Identity(subject(i), id)))
			}
		}
	}
	for _, i := range []int{5, 10, 20, c.n} {
		for _, tenant := range []string{"", "t1"} {
			key := AppendViewKey(nil, TagViews, subject(i), tenant)
			_, p, e, ok := c.views(i, tenant)
			switch {
			case ok && (tenant == "" || i%10 == 0):
				must(b.Set(key, enc.Views(append(p, e...), len(p))))
			case i%10 == 0:
				must(b.Delete(key))
			}
		}
	}
	must(b.Set(Key(TagMeta, MetaCursorKey), []byte(fmt.Sprintf("k%d", c.night))))
	must(b.Finish())
}

// checkNight reads every product of the store under dir and finds the
// night's answers: changed, gone, new, and the rest as they were.
func checkNight(t *testing.T, dir string, c testNight) {
	t.Helper()
	st, err := Open(filepath.Join(dir, "store"), 1<<20, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.UsePoints(filepath.Join(dir, "points"), nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= c.n; i++ {
		subject := fmt.Sprintf("gtin:%014d", i)
		for _, tenant := range []string{"", "t1"} {
			id, p, e, has := c.views(i, tenant)
			has = has && (tenant == "" || i%10 == 0)
			for tag, want := range map[byte][]byte{TagIdentity: id, TagPassport: p, TagEvidence: e} {
				got, ok, err := st.View(tag, subject, tenant, nil)
				if err != nil || ok != has || has && string(got) != string(want) {
					t.Fatalf("night %d: view %c of %s %q: %v %v", c.night, tag, subject, tenant, ok, err)
				}
			}
		}
		_, ok, err := st.Alias(subject)
		if err != nil || ok != (i != 20) {
			t.Fatalf("night %d: alias of %s: %v %v", c.night, subject, ok, err)
		}
	}
	aliases := 0
	if err := st.Scan(TagAlias, func(k, v []byte) error { aliases++; return nil }); err != nil || aliases != c.n {
		t.Errorf("night %d: %d aliases scanned (%v), want %d", c.night, aliases, err, c.n)
	}
	key, _, err := st.Meta(MetaCursorKey)
	if err != nil || string(key) != fmt.Sprintf("k%d", c.night) {
		t.Errorf("night %d: cursor key %q, %v", c.night, key, err)
	}
	if got, err := st.Layers(); err != nil || got != c.night {
		t.Errorf("night %d: the store holds %d layers", c.night, got)
	}
}

// trainV2 makes the dictionaries of a store whose point index is of version
// 2, as snapshots of format 5 have it: an s2 dictionary of identity views.
func trainV2(b *Builder, s Samples) error {
	pe := make([][]byte, len(s.Passport))
	for i := range pe {
		pe[i] = slices.Concat(s.Passport[i], s.Evidence[i])
	}
	d := Dictionaries{Views: coverDict(pe, viewsDictSize, viewsDictSegment)}
	sd := s2.MakeDict(rawDict(s.Identity, identityDictSize), nil)
	if sd == nil {
		return fmt.Errorf("no s2 dictionary of %d samples", len(s.Identity))
	}
	d.Identity = sd.Bytes()
	return b.TrainWith(d)
}

// pointsMagicOf is the magic of the point index under dir.
func pointsMagicOf(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "points"))
	if err != nil || len(b) < 8 {
		t.Fatalf("%v, %d bytes", err, len(b))
	}
	return string(b[:8])
}

// A night on a base whose point index is of version 2 keeps that version
// and the base's dictionary, so the base's stored values stay valid, and
// answers as the night's store should; a store written whole is of version
// 3, and so are its nights.
func TestLayerKeepsItsBasePointsVersion(t *testing.T) {
	const n = 300
	for _, c := range []struct {
		train func(*Builder, Samples) error
		magic string
	}{{trainV2, pointsMagicV2}, {(*Builder).Train, pointsMagic}} {
		base, night := t.TempDir(), t.TempDir()
		buildTestStoreWith(t, base, n, 0, c.train)
		buildTestLayer(t, base, night, testNight{n: n, night: 1})
		checkNight(t, night, testNight{n: n, night: 1})
		for _, dir := range []string{base, night} {
			if got := pointsMagicOf(t, dir); got != c.magic {
				t.Errorf("%s: point index %q, want %q", dir, got, c.magic)
			}
		}
	}
}

// A layer answers as a store written whole with the night's changes would,
// night after night, each night's store the base of the next; the base's
// tables are the layer's own files (hard links, not copies), and the base
// still answers as it did.
func TestLayerAnswersAsStoreWrittenWhole(t *testing.T) {
	const n = 300
	dirs := []string{t.TempDir()}
	buildTestStore(t, dirs[0], n, 0)
	for night := 1; night <= 3; night++ {
		dir := t.TempDir()
		buildTestLayer(t, dirs[len(dirs)-1], dir, testNight{n: n, night: night})
		checkNight(t, dir, testNight{n: n, night: night})
		dirs = append(dirs, dir)
	}
	base, err := Open(filepath.Join(dirs[0], "store"), 1<<20, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	if _, ok, err := base.Alias("gtin:00000000000020"); !ok || err != nil {
		t.Errorf("the base lost product 20: %v %v", ok, err)
	}
	if got, err := base.Layers(); err != nil || got != 0 {
		t.Errorf("a store written whole holds %d layers", got)
	}
	baseTables, _ := filepath.Glob(filepath.Join(dirs[0], "store", "*.sst"))
	if len(baseTables) == 0 {
		t.Fatal("the base has no tables")
	}
	for _, p := range baseTables {
		a, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.Stat(filepath.Join(dirs[3], "store", filepath.Base(p)))
		if err != nil || !os.SameFile(a, b) {
			t.Errorf("%s is not the third night's own file: %v", filepath.Base(p), err)
		}
	}
}

// The same layer on the same base is the same bytes, whenever it is built.
func TestLayerSameBytesWhenBuiltAgain(t *testing.T) {
	base := t.TempDir()
	buildTestStore(t, base, 300, 0)
	dirs := []string{t.TempDir(), t.TempDir()}
	for i, dir := range dirs {
		if i > 0 {
			for now := time.Now().Unix(); time.Now().Unix() == now; {
				time.Sleep(20 * time.Millisecond)
			}
		}
		buildTestLayer(t, base, dir, testNight{n: 300, night: 1})
	}
	a, b := treeSums(t, dirs[0]), treeSums(t, dirs[1])
	for name, sum := range a {
		if b[name] != sum {
			t.Errorf("%s differs", name)
		}
	}
	if len(a) != len(b) {
		t.Errorf("%d files, then %d", len(a), len(b))
	}
	var names []string
	for name := range a {
		names = append(names, name)
	}
	t.Logf("files: %s", strings.Join(names, " "))
}

// BenchmarkPassportReadLayers reads the passport views of 20,000 products
// (a warm block cache, a shuffled order) from a store written whole and from
// the same store under one and under six layers, each of which spans the
// whole key range: what a layer adds to a read that the cache answers.
func BenchmarkPassportReadLayers(b *testing.B) {
	const n = 20000
	dirs := []string{b.TempDir()}
	buildTestStore(b, dirs[0], n, 0)
	for night := 1; night <= 6; night++ {
		dir := b.TempDir()
		buildTestLayer(b, dirs[night-1], dir, testNight{n: n, night: night})
		dirs = append(dirs, dir)
	}
	subjects := make([]string, n)
	for i := range subjects {
		subjects[i] = fmt.Sprintf("gtin:%014d", i)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { subjects[i], subjects[j] = subjects[j], subjects[i] })
	for _, layers := range []int{0, 1, 6} {
		b.Run(fmt.Sprintf("layers=%d", layers), func(b *testing.B) {
			st, err := Open(filepath.Join(dirs[layers], "store"), 256<<20, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			var buf []byte
			for _, s := range subjects {
				buf, _, _ = st.View(TagPassport, s, "", buf[:0])
			}
			i := 0
			for b.Loop() {
				var ok bool
				buf, ok, err = st.View(TagPassport, subjects[i%n], "", buf[:0])
				if err != nil || ok != (layers == 0 || subjects[i%n] != "gtin:00000000000020") {
					b.Fatalf("%s: %v %v", subjects[i%n], ok, err)
				}
				i++
			}
		})
	}
}

// A store whose count of layers cannot be read (its block damaged) is not
// taken for a store of no layers: NewLayer on it fails, naming the store and
// the key.
func TestNewLayerFailsWhenTheCountOfLayersCannotBeRead(t *testing.T) {
	base, night := t.TempDir(), t.TempDir()
	buildTestStore(t, base, 300, 0)
	buildTestLayer(t, base, night, testNight{n: 300, night: 1})
	// The night's own tables (the base's are linked): its table of
	// dictionaries holds the count alone, so the views' dictionary is still
	// read from the base's.
	tables, err := filepath.Glob(filepath.Join(night, "store", "*.sst"))
	if err != nil {
		t.Fatal(err)
	}
	damaged := 0
	for _, p := range tables {
		if _, err := os.Stat(filepath.Join(base, "store", filepath.Base(p))); err == nil {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[1] ^= 0xff // in the first data block
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		damaged++
	}
	if damaged == 0 {
		t.Fatal("the night wrote no table of its own")
	}
	_, err = NewLayer(filepath.Join(t.TempDir(), "store"), filepath.Join(t.TempDir(), "sst"), filepath.Join(night, "store"))
	if err == nil || !strings.Contains(err.Error(), "count of layers") || !strings.Contains(err.Error(), ".sst is damaged") {
		t.Fatalf("NewLayer on a store whose count of layers is damaged: %v", err)
	}
}
