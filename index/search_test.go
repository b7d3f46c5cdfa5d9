package index

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

// modelDocs generates docs of realistic shape: a few manufacturers, one of them with most of the
// products (so it spans many blocks), several spellings of one name, tenant docs that shadow
// public ones, tenant-private products, and repeated updated_at values (ties).
func modelDocs(n int, seed uint64) []Doc {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	makers := []string{
		"Acme GmbH", "ACME", "Acme Tools Inc.", "Bosch", "Robert Bosch GmbH", "Siemens AG",
		"Nestlé S.A.", "Nestle", "Müller Milch", "Zeta Foods", "", "Zeta Food GmbH", "Zeta Fods",
		"Zetta Foods Ltd",
	}
	weights := []int{30, 10, 8, 6, 6, 6, 5, 3, 3, 2, 1, 1, 1, 1}
	total := 0
	for _, w := range weights {
		total += w
	}
	pick := func() string {
		x := r.IntN(total)
		for i, w := range weights {
			if x < w {
				return makers[i]
			}
			x -= w
		}
		return makers[0]
	}
	when := func() time.Time {
		if r.IntN(4) == 0 {
			return t0.Add(time.Duration(r.IntN(5)) * time.Hour) // shared timestamps
		}
		return t0.Add(time.Duration(r.Int64N(int64(30 * 24 * time.Hour))))
	}
	doc := func(subject, vis string) Doc {
		return Doc{
			Subject: subject, Manufacturer: pick(), Brand: "brand-" + subject[len(subject)-2:],
			TrustLevel: r.IntN(6), HasPassport: r.IntN(3) == 0, UpdatedAt: when(), Visibility: vis,
		}
	}
	var docs []Doc
	for i := 0; i < n; i++ {
		subject := fmt.Sprintf("gtin:%014d", 1000+i*37)
		if i%5 == 4 {
			subject = fmt.Sprintf("internal_sku:SKU-%d", i) // another namespace, variable width
		}
		var tenantDocs []Doc
		for _, t := range []string{"t1", "t2"} {
			if r.IntN(6) == 0 {
				tenantDocs = append(tenantDocs, doc(subject, t))
			}
		}
		if r.IntN(10) != 0 { // else tenant-private (or nothing) only
			pub := doc(subject, "")
			for _, td := range tenantDocs {
				pub.ShadowedFor = append(pub.ShadowedFor, td.Visibility)
			}
			docs = append(docs, pub)
		}
		docs = append(docs, tenantDocs...)
	}
	slices.SortStableFunc(docs, func(a, b Doc) int { return strings.Compare(a.Subject, b.Subject) })
	return docs
}

func visibleTo(d Doc, tenant string) bool {
	if d.Visibility == "" {
		return !slices.Contains(d.ShadowedFor, tenant)
	}
	return d.Visibility == tenant && tenant != ""
}

func passes(d Doc, q Query) bool {
	return visibleTo(d, q.Tenant) &&
		(q.TrustLevelMin < 0 || d.TrustLevel >= q.TrustLevelMin) &&
		(q.HasPassport == nil || d.HasPassport == *q.HasPassport) &&
		(q.UpdatedSince.IsZero() || !d.UpdatedAt.Before(q.UpdatedSince))
}

// expected computes a query's full result list by brute force over the docs, with the index's
// own ranked candidate names for manufacturer queries.
func expected(t *testing.T, ix *Index, docs []Doc, q Query) []Hit {
	t.Helper()
	scores := map[string]float64{}
	if q.Manufacturer != "" {
		cands, err := ix.candidates(context.Background(), Normalize(q.Manufacturer))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cands {
			scores[c.name] = c.score
		}
	}
	var out []Hit
	for _, d := range docs {
		s, ok := scores[Normalize(d.Manufacturer)]
		if q.Manufacturer != "" && !ok || !passes(d, q) {
			continue
		}
		out = append(out, Hit{Subject: d.Subject, Manufacturer: d.Manufacturer, Brand: d.Brand,
			TrustLevel: d.TrustLevel, HasPassport: d.HasPassport, UpdatedAt: d.UpdatedAt, Score: s})
	}
	if q.Sort == SortRelevance {
		slices.SortFunc(out, func(a, b Hit) int {
			return cmp.Or(cmp.Compare(b.Score, a.Score),
				strings.Compare(Normalize(a.Manufacturer), Normalize(b.Manufacturer)),
				strings.Compare(a.Subject, b.Subject))
		})
	} else {
		slices.SortFunc(out, func(a, b Hit) int {
			return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), strings.Compare(a.Subject, b.Subject))
		})
	}
	return out
}

// walk pages through a query with the given limit, passing each Next through JSON as a cursor
// would, and returns all hits.
func walk(t *testing.T, ix *Index, q Query, limit int) []Hit {
	t.Helper()
	hits, err := walkErr(ix, q, limit)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

func walkErr(ix *Index, q Query, limit int) ([]Hit, error) {
	return walkWith(ix, q, limit, nil)
}

// walkWith is walkErr with a function that may alter each position before it is used.
func walkWith(ix *Index, q Query, limit int, alter func(*Position)) ([]Hit, error) {
	q.Limit = limit
	var all []Hit
	for pages := 0; ; pages++ {
		if pages > 10000 {
			return nil, fmt.Errorf("paging does not end")
		}
		page, err := ix.Search(context.Background(), q)
		if err != nil {
			return nil, err
		}
		if len(page.Hits) > limit {
			return nil, fmt.Errorf("page of %d hits for limit %d", len(page.Hits), limit)
		}
		all = append(all, page.Hits...)
		if page.Next == nil {
			return all, nil
		}
		if len(page.Hits) != limit {
			return nil, fmt.Errorf("short page (%d of %d) with a next position", len(page.Hits), limit)
		}
		js, err := json.Marshal(page.Next)
		if err != nil {
			return nil, err
		}
		q.After = new(Position)
		if err := json.Unmarshal(js, q.After); err != nil {
			return nil, err
		}
		if alter != nil {
			alter(q.After)
		}
	}
}

func sameHits(t *testing.T, label string, got, want []Hit) {
	t.Helper()
	key := func(h Hit) string {
		return fmt.Sprintf("%s|%s|%s|%d|%v|%s|%.4f", h.Subject, h.Manufacturer, h.Brand, h.TrustLevel,
			h.HasPassport, h.UpdatedAt.Format(time.RFC3339Nano), h.Score)
	}
	seen := map[string]bool{}
	for _, h := range got {
		if seen[h.Subject] {
			t.Errorf("%s: %s repeated", label, h.Subject)
		}
		seen[h.Subject] = true
	}
	n := max(len(got), len(want))
	for i := 0; i < n; i++ {
		var g, w string
		if i < len(got) {
			g = key(got[i])
		}
		if i < len(want) {
			w = key(want[i])
		}
		if g != w {
			t.Fatalf("%s: %d hits, want %d; first difference at %d:\n got %s\nwant %s", label, len(got), len(want), i, g, w)
		}
	}
}

func boolPtr(b bool) *bool { return &b }

func queryMatrix() []Query {
	var qs []Query
	since := t0.Add(20 * 24 * time.Hour)
	for _, tenant := range []string{"", "t1", "t3"} {
		for _, m := range []string{"", "acme", "bosch", "acme tols", "zeta foods", "zzz"} {
			for _, f := range []Query{
				{TrustLevelMin: -1},
				{TrustLevelMin: 4},
				{TrustLevelMin: -1, HasPassport: boolPtr(true)},
				{TrustLevelMin: 2, HasPassport: boolPtr(false), UpdatedSince: since},
				{TrustLevelMin: -1, UpdatedSince: t0.Add(2 * time.Hour)}, // exactly a shared timestamp
			} {
				q := f
				q.Tenant, q.Manufacturer = tenant, m
				q.Sort = SortUpdatedAt
				qs = append(qs, q)
				if m != "" {
					q.Sort = SortRelevance
					qs = append(qs, q)
				}
			}
		}
	}
	return qs
}

// TestSearchModel checks filters, visibility, both orders and paging (no repeat, no gap, for
// several page sizes) against a brute-force model, with tiny blocks and time windows forced so
// that every query-planning path runs.
func TestSearchModel(t *testing.T) {
	docs := modelDocs(300, 1)
	for _, cfg := range []struct {
		name        string
		blockSize   int
		segmentDocs int // docs per Bleve segment before the final merge
		tune        func(*tuning)
	}{
		{"default", defaultBlockSize, batchSize, func(*tuning) {}},
		{"small-blocks-windows", 4, batchSize, func(tu *tuning) { tu.directMax = 0 }},
		{"windows-sorted-by-bleve", 4, batchSize, func(tu *tuning) { tu.directMax = 0; tu.windowCap = 3 }},
		{"one-window-attempt", 3, batchSize, func(tu *tuning) { tu.directMax = 0; tu.windowAttempts = 1 }},
		{"mixed-names-small-batches", 24, batchSize, func(tu *tuning) { tu.smallBatch = 30 }},
		// About 30 segments, merged into one when the builder closes.
		{"merged-segments", 4, 13, func(tu *tuning) { tu.directMax = 0 }},
	} {
		t.Run(cfg.name, func(t *testing.T) {
			t.Parallel()
			ix := buildTestIndexBatches(t, docs, cfg.blockSize, cfg.segmentDocs)
			cfg.tune(&ix.tune)
			for _, q := range queryMatrix() {
				label := fmt.Sprintf("%+v", q)
				want := expected(t, ix, docs, q)
				for _, limit := range []int{1, 4, 100} {
					if limit == 1 && len(want) > 25 {
						continue // slow, and adds little over 4 for long lists
					}
					sameHits(t, fmt.Sprintf("%s limit %d", label, limit), walk(t, ix, q, limit), want)
				}
			}
		})
	}
}

// TestPositionHints checks that positions whose Doc hint no longer names their subject (as after a
// snapshot swap) still continue right after their subject.
func TestPositionHints(t *testing.T) {
	docs := modelDocs(200, 11)
	ix := buildTestIndex(t, docs, 4)
	ix.tune.directMax = 0
	for _, q := range []Query{
		{Manufacturer: "acme", TrustLevelMin: -1, Sort: SortRelevance, Tenant: "t1"},
		{Manufacturer: "acme", TrustLevelMin: -1, Sort: SortUpdatedAt},
		{TrustLevelMin: 2, Sort: SortUpdatedAt, Tenant: "t2"},
	} {
		want := expected(t, ix, docs, q)
		for _, alter := range []func(*Position){
			func(p *Position) { p.Doc = 0 },
			func(p *Position) { p.Doc = 1 << 30 },
			func(p *Position) { p.Doc++ },
		} {
			got, err := walkWith(ix, q, 3, alter)
			if err != nil {
				t.Fatal(err)
			}
			sameHits(t, fmt.Sprintf("%+v", q), got, want)
		}
	}
}

func TestTenantVisibility(t *testing.T) {
	u := t0
	docs := []Doc{
		// A public product that t1 has its own data for.
		{Subject: "gtin:00000000000017", Manufacturer: "Acme", TrustLevel: 1, UpdatedAt: u, ShadowedFor: []string{"t1"}},
		{Subject: "gtin:00000000000017", Manufacturer: "Acme GmbH", TrustLevel: 5, UpdatedAt: u, Visibility: "t1", HasPassport: true},
		// A product only t1 knows.
		{Subject: "gtin:00000000000024", Manufacturer: "Acme", TrustLevel: 2, UpdatedAt: u, Visibility: "t1"},
		// A plain public product.
		{Subject: "gtin:00000000000031", Manufacturer: "Acme", TrustLevel: 3, UpdatedAt: u},
		// A product only t2 knows, under another manufacturer.
		{Subject: "gtin:00000000000048", Manufacturer: "Acme", TrustLevel: 3, UpdatedAt: u, Visibility: "t2"},
	}
	ix := buildTestIndex(t, docs, defaultBlockSize)
	type row struct {
		subject string
		trust   int
	}
	for _, c := range []struct {
		tenant string
		want   []row
	}{
		{"", []row{{"gtin:00000000000017", 1}, {"gtin:00000000000031", 3}}},
		{"t1", []row{{"gtin:00000000000017", 5}, {"gtin:00000000000024", 2}, {"gtin:00000000000031", 3}}},
		{"t2", []row{{"gtin:00000000000017", 1}, {"gtin:00000000000031", 3}, {"gtin:00000000000048", 3}}},
		{"t3", []row{{"gtin:00000000000017", 1}, {"gtin:00000000000031", 3}}},
	} {
		for _, sort := range []string{SortRelevance, SortUpdatedAt} {
			page, err := ix.Search(context.Background(), Query{Manufacturer: "acme", Tenant: c.tenant, TrustLevelMin: -1, Sort: sort, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var got []row
			for _, h := range page.Hits {
				got = append(got, row{h.Subject, h.TrustLevel})
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("tenant %q sort %s: got %v, want %v", c.tenant, sort, got, c.want)
			}
			if page.Next != nil {
				t.Errorf("tenant %q: unexpected next position", c.tenant)
			}
		}
	}
}

func TestHitFields(t *testing.T) {
	when := time.Date(2024, 2, 29, 23, 59, 59, 123456789, time.FixedZone("CET", 3600))
	ix := buildTestIndex(t, []Doc{
		{Subject: "gtin:09520123456788", Manufacturer: "Robert Bosch GmbH", Brand: "Bosch", TrustLevel: 4, HasPassport: true, UpdatedAt: when},
		{Subject: "gtin:09520123456795", Manufacturer: "BOSCH", Brand: "", TrustLevel: 0, UpdatedAt: when.Add(-time.Hour)},
	}, defaultBlockSize)
	page, err := ix.Search(context.Background(), Query{Manufacturer: "bosch", TrustLevelMin: -1, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	want := []Hit{
		{Subject: "gtin:09520123456795", Manufacturer: "BOSCH", TrustLevel: 0, UpdatedAt: when.Add(-time.Hour), Score: 1},
		{Subject: "gtin:09520123456788", Manufacturer: "Robert Bosch GmbH", Brand: "Bosch", TrustLevel: 4, HasPassport: true, UpdatedAt: when, Score: 0.229},
	}
	if len(page.Hits) != 2 {
		t.Fatalf("got %+v", page.Hits)
	}
	for i, h := range page.Hits {
		w := want[i]
		if h.Subject != w.Subject || h.Manufacturer != w.Manufacturer || h.Brand != w.Brand || h.TrustLevel != w.TrustLevel ||
			h.HasPassport != w.HasPassport || !h.UpdatedAt.Equal(w.UpdatedAt) || h.UpdatedAt.Format(time.RFC3339Nano) != w.UpdatedAt.Format(time.RFC3339Nano) ||
			h.Score != w.Score {
			t.Errorf("hit %d = %+v, want %+v", i, h, w)
		}
	}
	// Without a manufacturer, the default order is updated_at and the score is 0.
	page, err = ix.Search(context.Background(), Query{TrustLevelMin: -1, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Hits) != 2 || page.Hits[0].Subject != "gtin:09520123456788" || page.Hits[0].Score != 0 {
		t.Errorf("updated_at page = %+v", page.Hits)
	}
}

func TestBuilderErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ix")
	b, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir); err == nil {
		t.Error("Create on an existing dir succeeded")
	}
	ok := Doc{Subject: "gtin:2", Manufacturer: "A", UpdatedAt: t0}
	if err := b.Add(ok); err != nil {
		t.Fatal(err)
	}
	for _, d := range []Doc{
		{Subject: "gtin:1", Manufacturer: "A", UpdatedAt: t0},                      // out of order
		{Subject: "gtin:2", Manufacturer: "B", UpdatedAt: t0},                      // repeated
		{Subject: "gtin:3", Manufacturer: "A", UpdatedAt: t0, TrustLevel: 6},       // trust out of range
		{Subject: "", Manufacturer: "A", UpdatedAt: t0},                            // no subject
		{Subject: "gtin:4\x00", Manufacturer: "A", UpdatedAt: t0},                  // reserved byte
		{Subject: "gtin:5", Manufacturer: "A", UpdatedAt: t0, Visibility: "x\x00"}, // reserved byte
	} {
		if err := b.Add(d); err == nil {
			t.Errorf("Add(%+v) succeeded", d)
		}
	}
	if err := b.Add(Doc{Subject: "gtin:2", Manufacturer: "A", UpdatedAt: t0, Visibility: "t1"}); err != nil {
		t.Errorf("tenant doc of the same subject: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(Doc{Subject: "gtin:9", UpdatedAt: t0}); err == nil {
		t.Error("Add after Close succeeded")
	}
}

func TestEmptyIndex(t *testing.T) {
	ix := buildTestIndex(t, nil, defaultBlockSize)
	for _, q := range []Query{{Manufacturer: "acme", Limit: 5, TrustLevelMin: -1}, {Limit: 5, TrustLevelMin: -1}} {
		page, err := ix.Search(context.Background(), q)
		if err != nil || len(page.Hits) != 0 || page.Next != nil {
			t.Errorf("%+v: %+v, %v", q, page, err)
		}
	}
}

// hashDir returns path → size, mode, modification time and SHA-256 of every file under dir.
func hashDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = info.Mode().String()
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[rel] = fmt.Sprintf("%d %s %s %s", info.Size(), info.Mode(), info.ModTime().UTC().Format(time.RFC3339Nano), hex.EncodeToString(sum[:]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadOnly checks that opening and searching (concurrently) never changes, adds or removes a
// file, and that a finished index holds no build leftovers.
func TestReadOnly(t *testing.T) {
	docs := modelDocs(300, 7)
	dir := filepath.Join(t.TempDir(), "index")
	writeTestIndex(t, dir, docs, defaultBlockSize, batchSize)
	before := hashDir(t, dir)
	for p := range before {
		if strings.Contains(p, "scorch-offline-build") {
			t.Errorf("build leftover %s", p)
		}
	}
	time.Sleep(20 * time.Millisecond) // a write after this would show in the modification times

	for round := 0; round < 2; round++ {
		ix, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, q := range queryMatrix()[g*10 : g*10+20] {
					q.Limit = 5
					if _, err := ix.Search(context.Background(), q); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
	}
	after := hashDir(t, dir)
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s changed: %s → %s", p, h, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared", p)
		}
	}
}

// TestConcurrentSearch runs identical queries from several goroutines (under -race in CI) and
// checks that results are identical.
// TestConcurrentSearch runs the same walks from several goroutines at once, on every query path
// (relevance; updated_at sorted in Go; updated_at sorted by Bleve), and holds each to the walk
// run alone.
func TestConcurrentSearch(t *testing.T) {
	docs := modelDocs(200, 3)
	ix := buildTestIndex(t, docs, 8)
	ix.tune.directMax, ix.tune.windowCap = 0, 3 // windows of more than 3 docs are sorted by Bleve
	queries := []Query{
		{Manufacturer: "acme", TrustLevelMin: -1, Sort: SortRelevance},
		{TrustLevelMin: -1, Sort: SortUpdatedAt},
		{Manufacturer: "acme", TrustLevelMin: 2, Sort: SortUpdatedAt},
	}
	var wg sync.WaitGroup
	for _, q := range queries {
		ref := walk(t, ix, q, 7)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := walkErr(ix, q, 7)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) != len(ref) {
					t.Errorf("%+v: got %d hits, want %d", q, len(got), len(ref))
					return
				}
				for i := range got {
					if got[i].Subject != ref[i].Subject || got[i].Score != ref[i].Score || !got[i].UpdatedAt.Equal(ref[i].UpdatedAt) {
						t.Errorf("%+v: hit %d differs", q, i)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
}
