package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// night changes docs as a day of updates would: some docs dropped, some changed (indexed fields,
// names, or only what a hit shows), new subjects between and after the others, a new name, and
// tenant docs added and removed.
func night(docs []Doc, r *rand.Rand, n int) []Doc {
	makers := []string{"Acme GmbH", "Bosch", "Nestlé S.A.", "Zeta Foods", "", "Night Maker " + fmt.Sprint(n)}
	var out []Doc
	for i, d := range docs {
		switch x := r.IntN(200); {
		case x < 4: // dropped
			continue
		case x < 8:
			d.TrustLevel = r.IntN(6)
			d.UpdatedAt = d.UpdatedAt.Add(time.Duration(r.IntN(1000)) * time.Minute)
		case x < 10:
			d.Manufacturer = makers[r.IntN(len(makers))]
		case x < 12:
			d.Brand += " (new)" // not indexed: only the doc store changes
		case x < 13 && d.Visibility == "":
			d.ShadowedFor = append(slices.Clone(d.ShadowedFor), "t9")
		case x < 14 && d.Visibility == "":
			d.HasPassport = !d.HasPassport
		}
		out = append(out, d)
		if i+1 < len(docs) && r.IntN(100) < 5 {
			// New subjects sorting right after this one, as a manufacturer's new GTINs would.
			for k := range 1 + r.IntN(3) {
				out = append(out, Doc{Subject: fmt.Sprintf("%s-n%d-%d", d.Subject, n, k), Manufacturer: makers[r.IntN(len(makers))],
					TrustLevel: r.IntN(6), UpdatedAt: t0.Add(time.Duration(r.IntN(1000)) * time.Hour), Visibility: []string{"", "", "t1"}[r.IntN(3)]})
			}
		}
	}
	for k := range 20 { // after every other subject
		out = append(out, Doc{Subject: fmt.Sprintf("zz:%d-%03d", n, k), Manufacturer: makers[5], TrustLevel: 3, UpdatedAt: t0.Add(time.Duration(k) * time.Hour)})
	}
	slices.SortStableFunc(out, func(a, b Doc) int { return strings.Compare(a.Subject, b.Subject) })
	return slices.CompactFunc(out, func(a, b Doc) bool { return a.Subject == b.Subject && a.Visibility == b.Visibility })
}

func writeUpdated(t *testing.T, dir, base string, docs []Doc, blockSize int) (report string) {
	t.Helper()
	b, err := updateFrom(dir, base, blockSize, batchSize)
	if err != nil {
		t.Fatal(err)
	}
	addAll(t, b, docs)
	return b.Report()
}

// segmentFiles lists the Bleve segment files of the index in dir.
func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(dir, productsDir, "*", "*.zap"))
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestUpdatedIndexAnswersAsWhole holds an updated index to the answers of an index built whole from
// the same docs, night after night (each night's index the base of the next), for every query of
// the matrix, in both orders, paged, with blocks and windows small enough that every query path
// runs. It also checks that the update kept the base: the whole build's segment is the base's
// file, not a copy, and the night's docs are a segment of their own.
func TestUpdatedIndexAnswersAsWhole(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			const bs = 4
			r := rand.New(rand.NewPCG(seed, 77))
			tmp := t.TempDir()
			docs := modelDocs(300, seed)
			prev := filepath.Join(tmp, "0")
			writeTestIndex(t, prev, docs, bs, batchSize)
			first := segmentFiles(t, prev)[0]
			for n := 1; n <= 3; n++ {
				docs = night(docs, r, n)
				dir := filepath.Join(tmp, fmt.Sprint(n))
				report := writeUpdated(t, dir, prev, docs, bs)
				whole := filepath.Join(tmp, fmt.Sprintf("whole-%d", n))
				writeTestIndex(t, whole, docs, bs, batchSize)

				segs := segmentFiles(t, dir)
				if len(segs) < 2 {
					t.Fatalf("night %d: %d segments: the update did not keep the base", n, len(segs))
				}
				if want := fmt.Sprintf("updated: the base's whole build kept, %d segments", len(segs)); report != want {
					t.Errorf("night %d: report %q, want %q", n, report, want)
				}
				a, errA := os.ReadFile(first)
				b, errB := os.ReadFile(segs[0])
				if errA != nil || errB != nil || filepath.Base(first) != filepath.Base(segs[0]) || !bytes.Equal(a, b) {
					t.Fatalf("night %d: the first segment %s is not the base's %s (%v, %v)", n, segs[0], first, errA, errB)
				}

				got, err := Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				want, err := Open(whole)
				if err != nil {
					t.Fatal(err)
				}
				for i, c := range []struct {
					limit int
					tune  func(*tuning)
				}{
					{11, func(*tuning) {}},
					{100, func(tu *tuning) { tu.directMax = 0 }},
					{7, func(tu *tuning) { tu.directMax = 0; tu.windowCap = 3 }},
				} {
					c.tune(&got.tune)
					c.tune(&want.tune)
					for _, q := range queryMatrix() {
						if q.Tenant == "t3" {
							continue // a tenant without docs of its own: the public answers again
						}
						sameHits(t, fmt.Sprintf("night %d, tuning %d: %+v limit %d", n, i, q, c.limit), walk(t, got, q, c.limit), walk(t, want, q, c.limit))
					}
				}
				got.Close()
				want.Close()
				prev = dir
			}
		})
	}
}

// TestUpdateBuildsWholeWhenOrderCannotBeKept covers the updates that give up keeping the base:
// more new docs in one gap between two base docs than positions fit, and more new docs of a name
// in one of its blocks than a block may hold. Each is built whole, and answers as a whole build.
func TestUpdateBuildsWholeWhenOrderCannotBeKept(t *testing.T) {
	const bs = 4
	base := []Doc{
		{Subject: "a:1", Manufacturer: "Acme", UpdatedAt: t0},
		{Subject: "a:2", Manufacturer: "Acme", UpdatedAt: t0},
		{Subject: "b:1", Manufacturer: "Bosch", UpdatedAt: t0},
	}
	gap := slices.Clone(base)
	for i := range 1<<posShift/insertStep + 20 {
		gap = append(gap, Doc{Subject: fmt.Sprintf("a:1-%05d", i), Manufacturer: "Zeta", UpdatedAt: t0})
	}
	block := slices.Clone(base)
	for i := range maxBlockFill*bs + 1 {
		block = append(block, Doc{Subject: fmt.Sprintf("a:1-%05d", i), Manufacturer: "Acme", UpdatedAt: t0})
	}
	reports := map[string]string{"positions": "built whole: new products ran out of room between two of the base's",
		"block": fmt.Sprintf("built whole: a page of one manufacturer's products would hold more than %d", maxBlockFill*bs)}
	for name, docs := range map[string][]Doc{"positions": gap, "block": block} {
		t.Run(name, func(t *testing.T) {
			slices.SortFunc(docs, func(a, b Doc) int { return strings.Compare(a.Subject, b.Subject) })
			tmp := t.TempDir()
			writeTestIndex(t, filepath.Join(tmp, "base"), base, bs, batchSize)
			if got := writeUpdated(t, filepath.Join(tmp, "new"), filepath.Join(tmp, "base"), docs, bs); got != reports[name] {
				t.Errorf("report %q, want %q", got, reports[name])
			}
			if segs := segmentFiles(t, filepath.Join(tmp, "new")); len(segs) != 1 {
				t.Fatalf("%d segments, want 1 (built whole)", len(segs))
			}
			writeTestIndex(t, filepath.Join(tmp, "whole"), docs, bs, batchSize)
			got, err := Open(filepath.Join(tmp, "new"))
			if err != nil {
				t.Fatal(err)
			}
			defer got.Close()
			want, err := Open(filepath.Join(tmp, "whole"))
			if err != nil {
				t.Fatal(err)
			}
			defer want.Close()
			for _, q := range []Query{{Manufacturer: "acme", TrustLevelMin: -1}, {Manufacturer: "zeta", TrustLevelMin: -1}, {TrustLevelMin: -1}} {
				sameHits(t, fmt.Sprintf("%+v", q), walk(t, got, q, 100), walk(t, want, q, 100))
			}
		})
	}
}

// TestUpdateIsReproducible checks that updates of one base with the same docs write the same
// bytes. root.bolt is where they can differ: bbolt writes the buckets a transaction touched in
// the order of a Go map, so the pages of two sibling buckets too big to be kept inline in their
// parent (over a quarter of a page each) come out in either order. The index mapping Bleve keeps
// is one; the deletions of the base's segment are the other once they are big enough, so the
// night here changes a quarter of the docs. Each write of root.bolt is then a coin toss: the test
// updates the base several times and rewrites the first update's root.bolt many more.
func TestUpdateIsReproducible(t *testing.T) {
	tmp := t.TempDir()
	docs := modelDocs(3000, 3)
	base := filepath.Join(tmp, "base")
	writeTestIndex(t, base, docs, 16, batchSize)
	next := night(docs, rand.New(rand.NewPCG(3, 3)), 1)
	for i := range next {
		if i%4 == 0 {
			next[i].TrustLevel = (next[i].TrustLevel + 1) % 6
		}
	}
	var first map[string]string
	for n := range 6 {
		dir := filepath.Join(tmp, fmt.Sprint(n))
		if report := writeUpdated(t, dir, base, next, 16); !strings.HasPrefix(report, "updated:") {
			t.Fatalf("update %d: %s, want the base kept", n, report)
		}
		sums := fileSums(t, dir)
		if first == nil {
			first = sums
			continue
		}
		for rel, sum := range first {
			if sums[rel] != sum {
				t.Errorf("update %d: %s differs from the first update's", n, rel)
			}
		}
		if len(sums) != len(first) {
			t.Errorf("update %d: %d files, the first update %d", n, len(sums), len(first))
		}
	}

	dir := filepath.Join(tmp, "0", productsDir)
	roots, err := filepath.Glob(filepath.Join(dir, "*", "root.bolt"))
	if err != nil || len(roots) != 1 {
		t.Fatalf("want one root.bolt in %s, found %d (%v)", dir, len(roots), err)
	}
	segs, err := readRoot(roots[0])
	if err != nil {
		t.Fatal(err)
	}
	if size := segs[0].deleted.GetSerializedSizeInBytes(); size <= uint64(os.Getpagesize()/4) {
		t.Fatalf("the base segment's deletions take %d bytes: kept inline, they cannot show the order of bbolt's pages", size)
	}
	want, err := os.ReadFile(roots[0])
	if err != nil {
		t.Fatal(err)
	}
	for n := range 30 {
		if err := fixRootBolt(dir); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(roots[0])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("root.bolt written again (%d): other bytes", n+1)
		}
	}
}

// fileSums maps the path of every file under dir, relative to it, to its SHA-256.
func fileSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		sum := sha256.Sum256(b)
		sums[rel] = hex.EncodeToString(sum[:])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// writeUpdatedFromChange updates base to docs as a night does that knows what changed: it adds
// only the docs of the subjects whose docs differ from prev's (new, changed or gone), drops the
// base's docs of those subjects, and keeps every other base doc as it is.
func writeUpdatedFromChange(t *testing.T, dir, base string, prev, docs []Doc, blockSize int) (report string) {
	t.Helper()
	b, err := updateFrom(dir, base, blockSize, batchSize)
	if err != nil {
		t.Fatal(err)
	}
	if !b.KeepsBase() {
		t.Fatal("an update of a base of this format does not keep it")
	}
	bySubject := func(docs []Doc) map[string][]Doc {
		m := map[string][]Doc{}
		for _, d := range docs {
			m[d.Subject] = append(m[d.Subject], d)
		}
		return m
	}
	was, now := bySubject(prev), bySubject(docs)
	var changed []string
	for s, ds := range now {
		if old, ok := was[s]; !ok || fmt.Sprint(old) != fmt.Sprint(ds) {
			changed = append(changed, s)
		}
	}
	for s := range was {
		if _, ok := now[s]; !ok {
			changed = append(changed, s)
		}
	}
	slices.Sort(changed)
	for _, s := range changed {
		if err := b.KeepBaseBefore(s); err != nil {
			t.Fatal(err)
		}
		for _, d := range now[s] {
			if err := b.Add(d); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.DropBase(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.KeepBaseRest(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Report()
}

// TestUpdateToldOnlyTheChangeWritesTheSameIndex holds an update that is given only the docs of
// the subjects that changed (keeping the base's other docs as stored) to the bytes of an update
// given every doc, night after night, including nights that give up keeping the base.
func TestUpdateToldOnlyTheChangeWritesTheSameIndex(t *testing.T) {
	for _, c := range []struct {
		name      string
		seed      uint64
		blockSize int
	}{{"seed 1", 1, 4}, {"seed 2", 2, 16}, {"blocks overflow", 3, 1}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(c.seed, 78))
			tmp := t.TempDir()
			docs := modelDocs(400, c.seed)
			prev := filepath.Join(tmp, "0")
			writeTestIndex(t, prev, docs, c.blockSize, batchSize)
			reports := map[bool]int{}
			for n := 1; n <= 3; n++ {
				next := night(docs, r, n)
				every, change := filepath.Join(tmp, fmt.Sprint(n)), filepath.Join(tmp, fmt.Sprintf("change-%d", n))
				want := writeUpdated(t, every, prev, next, c.blockSize)
				got := writeUpdatedFromChange(t, change, prev, docs, next, c.blockSize)
				if got != want {
					t.Fatalf("night %d: report %q, given every doc %q", n, got, want)
				}
				reports[strings.HasPrefix(got, "updated:")]++
				a, b := fileSums(t, every), fileSums(t, change)
				for rel, sum := range a {
					if b[rel] != sum {
						t.Errorf("night %d: %s differs from the update given every doc", n, rel)
					}
				}
				if len(a) != len(b) {
					t.Errorf("night %d: %d files, the update given every doc %d", n, len(b), len(a))
				}
				docs, prev = next, every
			}
			if c.blockSize == 1 && reports[false] == 0 {
				t.Errorf("no night built whole: %v", reports)
			}
			if c.blockSize > 1 && reports[true] == 0 {
				t.Errorf("no night kept the base: %v", reports)
			}
		})
	}
}
