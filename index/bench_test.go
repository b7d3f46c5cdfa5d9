package index

// Benchmarks over a synthetic catalogue (200,000 product docs by default; set PDS_INDEX_BENCH_DOCS
// to change it). The index is built once per process, on first use, in a temporary directory
// removed at exit; normal `go test` runs never build it. Run with
//
//	go test ./index -run '^$' -bench . -benchtime 2000x
//
// Each search benchmark reports p50 and p99 latency of single Search calls (ms); the typo
// benchmarks also report how often the intended manufacturer is the first hit (top1-%).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

var bench struct {
	once      sync.Once
	dir       string
	ix        *Index
	err       error
	names     []string // raw manufacturer names, canonical spelling
	bases     []string // the same without their legal forms
	weights   []int    // docs per name
	docs      int
	buildTime time.Duration
	size      int64
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.ix != nil {
		bench.ix.Close()
	}
	if bench.dir != "" {
		os.RemoveAll(bench.dir)
	}
	os.Exit(code)
}

// Parts of synthetic manufacturer names: they cluster the way real ones do (many "X Elektro",
// many "Müller Y"), with accents and legal forms.
var (
	surnames = strings.Fields(`Müller Schmidt Schneider Fischer Weber Meyer Wagner Becker Schulz Hoffmann Koch
		Richter Klein Wolf Neumann Schwarz Zimmermann Braun Krüger Hofmann Hartmann Lange Werner Krause Lehmann
		Köhler Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez
		Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez
		Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall
		Rivera Campbell Mitchell Carter Roberts Dubois Lefebvre Moreau Laurent Rossi Russo Ferrari Esposito
		Bianchi Romano Colombo Ricci Marino Greco Jansen Bakker Visser Nielsen Hansen Pedersen Andersen Larsen
		Lindqvist Novak Kowalski Nowak Horváth Svoboda Dvořák Søndergaard Åberg Øvergaard Ibáñez Muñoz Peña Gómez
		Lefèvre Žukauskas Łukasiewicz Nordström Björk Heinämäki`)
	industries = strings.Fields(`Elektro Electric Electronics Foods Food Tools Werkzeuge Pharma Chemie Chemicals
		Textil Textiles Industries Technik Technologies Systems Solutions Components Automotive Hausgeräte
		Appliances Kosmetik Cosmetics Brewing Brauerei Dairy Molkerei Bakery Bäckerei Optics Medical Packaging
		Verpackung Plastics Kunststoffe Metall Steel Paper Papier Furniture Möbel Toys Spielwaren Sports Outdoor
		Garden Pet Beverages Getränke Lighting Energy Robotics Instruments Audio Farms Mills Labs`)
	legal = []string{"GmbH", "AG", "GmbH & Co. KG", "KG", "Ltd", "Ltd.", "Limited", "Inc.", "Inc", "Corp.",
		"Corporation", "S.A.", "SA", "S.p.A.", "S.r.l.", "B.V.", "N.V.", "A/S", "AB", "Oy", "plc", "LLC",
		"SAS", "S.L.", "Sp. z o.o.", "", "", ""}
	syllables = strings.Fields(`zen tri nova alt ex ver ion sol mar kor lux vit ar on el is ta ro ka mi do re
		fi na vo qu ix ly ber gen tec plex tron dyn max pro ven tur sa lo`)
)

func coined(r *rand.Rand) string {
	n := 2 + r.IntN(2)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(syllables[r.IntN(len(syllables))])
	}
	s := b.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

// syntheticNames returns n raw manufacturer names with distinct normalised forms, and the same
// names without their legal forms.
func syntheticNames(n int, r *rand.Rand) (names, bases []string) {
	seen := map[string]bool{}
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	for len(names) < n {
		var parts []string
		switch r.IntN(7) {
		case 0, 1:
			parts = []string{pick(surnames), pick(industries)}
		case 2:
			parts = []string{coined(r)}
		case 3:
			parts = []string{coined(r), pick(industries)}
		case 4:
			parts = []string{pick(surnames), "&", pick(surnames)}
		case 5:
			parts = []string{pick(industries), pick(surnames)}
		case 6:
			parts = []string{pick(surnames), coined(r)}
		}
		base := strings.Join(parts, " ")
		raw := strings.TrimSpace(base + " " + pick(legal))
		if nn := Normalize(raw); nn != "" && !seen[nn] {
			seen[nn] = true
			names, bases = append(names, raw), append(bases, base)
		}
	}
	return names, bases
}

// benchIndex builds (once) and returns the benchmark index.
func benchIndex(b *testing.B) *Index {
	b.Helper()
	bench.once.Do(func() {
		docs := 200000
		if s := os.Getenv("PDS_INDEX_BENCH_DOCS"); s != "" {
			docs, _ = strconv.Atoi(s)
		}
		bench.docs = docs
		r := rand.New(rand.NewPCG(42, 7))
		nNames := max(50, docs/70) // about 2,900 names for 200k docs; 14,000 for 1M
		bench.names, bench.bases = syntheticNames(nNames, r)
		// Docs per name: Zipf-like, so the biggest makers have thousands of products.
		bench.weights = make([]int, nNames)
		zipf := rand.NewZipf(rand.New(rand.NewPCG(1, 1)), 1.05, 2, uint64(nNames-1))
		// PDS_INDEX_BENCH_DIR keeps the index there between runs (same PDS_INDEX_BENCH_DOCS).
		parent, keep := os.LookupEnv("PDS_INDEX_BENCH_DIR")
		if !keep {
			if parent, bench.err = os.MkdirTemp("", "pds-index-bench"); bench.err != nil {
				return
			}
			bench.dir = parent
		}
		dir := filepath.Join(parent, "index")
		_, statErr := os.Stat(dir)
		build := statErr != nil
		start := time.Now()
		var bld *Builder
		if build {
			if bld, bench.err = Create(dir); bench.err != nil {
				return
			}
		}
		add := func(d Doc) error {
			if !build {
				return nil
			}
			return bld.Add(d)
		}
		base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; i < docs; i++ {
			k := int(zipf.Uint64())
			bench.weights[k]++
			m := bench.names[k]
			switch r.IntN(10) {
			case 0:
				m = strings.ToUpper(m)
			case 1:
				m = bench.bases[k]
			}
			subject := fmt.Sprintf("gtin:%014d", 4000000000000+int64(i)*13)
			d := Doc{Subject: subject, Manufacturer: m, Brand: "Brand " + strconv.Itoa(k%500),
				TrustLevel: r.IntN(6), HasPassport: r.IntN(3) == 0,
				UpdatedAt: base.Add(time.Duration(r.Int64N(int64(700 * 24 * time.Hour))))}
			tenant := ""
			if r.IntN(20) == 0 {
				tenant = "tenant" + strconv.Itoa(r.IntN(5))
				d.ShadowedFor = []string{tenant}
			}
			if r.IntN(100) != 0 { // 1% tenant-private
				if err := add(d); err != nil {
					bench.err = err
					return
				}
			}
			if tenant != "" {
				d.Visibility, d.ShadowedFor, d.TrustLevel = tenant, nil, 5
				if err := add(d); err != nil {
					bench.err = err
					return
				}
			}
		}
		if build {
			if bench.err = bld.Close(); bench.err != nil {
				return
			}
		}
		bench.buildTime = time.Since(start)
		filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				bench.size += info.Size()
			}
			return nil
		})
		bench.ix, bench.err = Open(dir)
		if bench.err == nil {
			bench.ix.cache.max = 0 // measure every query from scratch
		}
		fmt.Fprintf(os.Stderr, "index: built %d docs, %d names in %v, %.1f MB; biggest maker %d docs\n",
			docs, nNames, bench.buildTime.Round(time.Millisecond), float64(bench.size)/1e6, slices.Max(bench.weights))
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.ix
}

// typo applies one or two random typing mistakes (substitute, delete, insert or swap letters)
// to a name, and sometimes lower-cases it.
func typo(name string, edits int, r *rand.Rand) string {
	rs := []rune(name)
	letters := func() []int {
		var idx []int
		for i, c := range rs {
			if unicode.IsLetter(c) {
				idx = append(idx, i)
			}
		}
		return idx
	}
	for e := 0; e < edits; e++ {
		idx := letters()
		if len(idx) < 2 {
			break
		}
		i := idx[r.IntN(len(idx))]
		c := rune('a' + r.IntN(26))
		switch r.IntN(4) {
		case 0:
			rs[i] = c
		case 1:
			rs = slices.Delete(rs, i, i+1)
		case 2:
			rs = slices.Insert(rs, i, c)
		case 3:
			if i+1 < len(rs) && unicode.IsLetter(rs[i+1]) {
				rs[i], rs[i+1] = rs[i+1], rs[i]
			} else {
				rs[i] = c
			}
		}
	}
	if r.IntN(2) == 0 {
		return strings.ToLower(string(rs))
	}
	return string(rs)
}

type benchQuery struct {
	q      string
	intent string // normalised intended name
}

// typoQueries draws n typo'd queries for makers picked in proportion to their products
// (byProducts) or uniformly.
func typoQueries(n int, byProducts bool, seed uint64) []benchQuery {
	r := rand.New(rand.NewPCG(seed, 99))
	total := 0
	for _, w := range bench.weights {
		total += w
	}
	var out []benchQuery
	for len(out) < n {
		k := r.IntN(len(bench.names))
		if byProducts {
			x := r.IntN(total)
			for k = 0; x >= bench.weights[k]; k++ {
				x -= bench.weights[k]
			}
		} else if bench.weights[k] == 0 {
			continue
		}
		name := bench.names[k]
		out = append(out, benchQuery{q: typo(name, 1+r.IntN(2), r), intent: Normalize(name)})
	}
	return out
}

func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1e6
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

func runQueries(b *testing.B, qs []benchQuery, base Query) {
	ix := benchIndex(b)
	lat := make([]time.Duration, 0, b.N)
	top1 := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bq := qs[i%len(qs)]
		q := base
		q.Manufacturer = bq.q
		start := time.Now()
		page, err := ix.Search(context.Background(), q)
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if bq.intent != "" && len(page.Hits) > 0 && Normalize(page.Hits[0].Manufacturer) == bq.intent {
			top1++
		}
	}
	b.StopTimer()
	reportLatency(b, lat)
	if qs[0].intent != "" {
		b.ReportMetric(100*float64(top1)/float64(b.N), "top1-%")
	}
}

var relevancePage = Query{TrustLevelMin: -1, Sort: SortRelevance, Limit: 20}

// BenchmarkSearchTypo: typo'd manufacturer names, makers drawn in proportion to their products.
func BenchmarkSearchTypo(b *testing.B) {
	benchIndex(b)
	runQueries(b, typoQueries(2000, true, 1), relevancePage)
}

// BenchmarkSearchTypoUniform: typo'd names, makers drawn uniformly (the long tail).
func BenchmarkSearchTypoUniform(b *testing.B) {
	benchIndex(b)
	runQueries(b, typoQueries(2000, false, 2), relevancePage)
}

// BenchmarkSearchTypoFiltered: typo'd names with trust level and passport filters and a tenant.
func BenchmarkSearchTypoFiltered(b *testing.B) {
	benchIndex(b)
	q := relevancePage
	q.TrustLevelMin, q.HasPassport, q.Tenant = 4, boolPtr(true), "tenant1"
	runQueries(b, typoQueries(2000, true, 3), q)
}

// BenchmarkSearchExactBiggest: the exact name of the maker with the most products.
func BenchmarkSearchExactBiggest(b *testing.B) {
	benchIndex(b)
	big := 0
	for i, w := range bench.weights {
		if w > bench.weights[big] {
			big = i
		}
	}
	runQueries(b, []benchQuery{{q: bench.names[big], intent: Normalize(bench.names[big])}}, relevancePage)
}

// BenchmarkSearchTypoUpdatedSort: typo'd names sorted by updated_at.
func BenchmarkSearchTypoUpdatedSort(b *testing.B) {
	benchIndex(b)
	q := relevancePage
	q.Sort = SortUpdatedAt
	qs := typoQueries(2000, true, 4)
	for i := range qs {
		qs[i].intent = "" // not ranked by name
	}
	runQueries(b, qs, q)
}

// BenchmarkSearchUpdated: no manufacturer, newest first, first page and (via the cursor of page
// 1) the second.
func BenchmarkSearchUpdated(b *testing.B) {
	ix := benchIndex(b)
	since := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		q    Query
	}{
		{"all", Query{TrustLevelMin: -1, Sort: SortUpdatedAt, Limit: 20}},
		{"filtered", Query{TrustLevelMin: 5, HasPassport: boolPtr(true), Tenant: "tenant2", Sort: SortUpdatedAt, Limit: 20}},
		{"since", Query{TrustLevelMin: -1, UpdatedSince: since, Sort: SortUpdatedAt, Limit: 20}},
	} {
		b.Run(c.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			q := c.q
			for i := 0; i < b.N; i++ {
				start := time.Now()
				page, err := ix.Search(context.Background(), q)
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				q.After = page.Next // walk deeper, wrapping at the end
				if i%50 == 49 || q.After == nil {
					q.After = nil
				}
			}
			reportLatency(b, lat)
		})
	}
}

// BenchmarkSearchTypoPaging: typo'd names, pages 2 to 5 through cursors.
func BenchmarkSearchTypoPaging(b *testing.B) {
	ix := benchIndex(b)
	qs := typoQueries(500, true, 5)
	lat := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		q := relevancePage
		q.Manufacturer = qs[i%len(qs)].q
		for p := 0; p < 5; p++ {
			start := time.Now()
			page, err := ix.Search(context.Background(), q)
			if p > 0 {
				lat = append(lat, time.Since(start))
			}
			if err != nil {
				b.Fatal(err)
			}
			if page.Next == nil {
				break
			}
			q.After = page.Next
		}
	}
	if len(lat) > 0 {
		reportLatency(b, lat)
	}
}

// BenchmarkIndexBuild10k builds an index of 10,000 docs (one Bleve segment) per op, as ingest's
// views stage feeds it: `make bench-go` reports its allocations, the regression guard of the
// build path.
func BenchmarkIndexBuild10k(b *testing.B) {
	const n = 10000
	r := rand.New(rand.NewPCG(42, 7))
	names, _ := syntheticNames(n/70, r)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = Doc{Subject: fmt.Sprintf("gtin:%014d", 4000000000000+int64(i)*13), Manufacturer: names[r.IntN(len(names))],
			TrustLevel: r.IntN(6), HasPassport: r.IntN(3) == 0, UpdatedAt: base.Add(time.Duration(r.Int64N(int64(700 * 24 * time.Hour))))}
		if i%20 == 0 {
			docs[i].ShadowedFor = []string{"tenant" + strconv.Itoa(i%5)}
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		writeTestIndex(b, filepath.Join(b.TempDir(), strconv.Itoa(i)), docs, defaultBlockSize, batchSize)
	}
	b.ReportMetric(n, "docs/op")
}
