package index

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Query is one search request.
type Query struct {
	Manufacturer  string    // "" = no manufacturer filter
	Tenant        string    // caller's tenant; sees public docs not shadowed for it, plus docs with Visibility == Tenant
	TrustLevelMin int       // -1 = no filter (0 filters nothing either)
	HasPassport   *bool     // nil = no filter
	UpdatedSince  time.Time // zero = no filter; else updated_at >= UpdatedSince
	Sort          string    // "relevance" (requires Manufacturer) or "updated_at"; "" = relevance with a manufacturer, else updated_at
	Limit         int       // 1..100 (values outside are clamped)
	After         *Position // nil = first page
}

// Sort orders.
const (
	SortRelevance = "relevance"
	SortUpdatedAt = "updated_at"
)

// Position is where a page ended: the sort key of its last hit. It is meant for the query and the
// index that produced it; the caller binds it to the query (an authenticated cursor).
//
// For sort=relevance: Score and Name are the rank key of the last hit's manufacturer name, Subject
// its subject. For sort=updated_at: Updated is the last hit's updated_at (Unix nanoseconds) and
// Subject its subject. Doc, the last hit's place in the index, is a hint: it is used only while it
// still names Subject, so a position taken from another snapshot continues right after its sort
// key there.
type Position struct {
	Score   float64 `json:"s,omitempty"`
	Name    string  `json:"n,omitempty"`
	Updated int64   `json:"u,omitempty"`
	Subject string  `json:"id"`
	Doc     uint32  `json:"d,omitempty"`
}

// Hit is one product in a page.
type Hit struct {
	Subject      string
	Manufacturer string
	Brand        string
	TrustLevel   int
	HasPassport  bool
	UpdatedAt    time.Time
	Score        float64 // relevance of the manufacturer name (1 = exact); 0 without a manufacturer query
}

// Page is one page of results.
type Page struct {
	Hits []Hit
	Next *Position // nil when no more results
}

// Index is an open, read-only index. It is safe for concurrent use.
type Index struct {
	products bleve.Index
	store    *docStore
	meta     meta
	table    *nameTable
	tune     tuning
	cache    candidateCache
}

type nameEntry struct {
	name   string
	count  int // docs with this name, all visibilities
	blocks int // blocks its docs are in (block numbers 0..blocks-1)
}

// tuning holds the knobs of query planning; tests shrink them to exercise every path on small data.
type tuning struct {
	maxNames       int // ranked names kept (the result set of a manufacturer query)
	directMax      int // sort=updated_at: read at most this many docs without time windows
	windowCap      int // sort=updated_at: most docs a time window is read for (more: sorted by Bleve)
	windowAttempts int // windowed queries before one unbounded query
	smallBatch     int // sort=relevance: docs (all visibilities) of a run of small names read at once
	minSimilarity  float64
}

var defaultTuning = tuning{
	maxNames:       100,
	directMax:      2000,
	windowCap:      512,
	windowAttempts: 4,
	smallBatch:     1024,
	minSimilarity:  0.4,
}

// OpenOptions configure OpenWith.
type OpenOptions struct {
	// CheckCopy, when set, is called with the path of each file the
	// index reads from a private copy (Copied: Bleve's segments and the
	// doc store's entries; see private.go) and a reader of that copy,
	// before anything reads it; an error fails the open.
	CheckCopy func(path string, copy io.Reader) error
	// CopyDir, when set, is a folder on disk for the private copies: each
	// is a file there whose name is removed at once, so its pages are the
	// page cache's, which the kernel drops under memory pressure and reads
	// again, where a copy in memory (a memfd) stays resident. For a server
	// with less memory than its search index. Not on Windows, which maps
	// the segment files themselves.
	CopyDir string
}

// Open opens the index in dir read-only, with no check of its segments'
// copies.
func Open(dir string) (*Index, error) { return OpenWith(dir, OpenOptions{}) }

// OpenWith opens the index in dir read-only, for serving: Bleve's segments
// and the doc store's entries are read from private copies, made and
// checked (o.CheckCopy) here, so that nothing done to the files afterwards
// reaches what is read.
func OpenWith(dir string, o OpenOptions) (*Index, error) {
	ix := &Index{tune: defaultTuning, cache: candidateCache{max: 1024}}
	js, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return nil, fmt.Errorf("index: open: %w", err)
	}
	if err := json.Unmarshal(js, &ix.meta); err != nil {
		return nil, fmt.Errorf("index: open: %s: %w", metaFile, err)
	}
	if ix.meta.Format < 1 || ix.meta.Format > formatNumber {
		return nil, fmt.Errorf("index: open: unknown format %d (this pds reads 1 to %d)", ix.meta.Format, formatNumber)
	}
	if ix.meta.BlockSize <= 0 {
		return nil, fmt.Errorf("index: open: bad block size %d", ix.meta.BlockSize)
	}
	entries, err := readNames(filepath.Join(dir, namesFile), ix.meta.Format, ix.meta.BlockSize)
	if err != nil {
		return nil, err
	}
	if len(entries) != ix.meta.Names {
		return nil, fmt.Errorf("index: open: %s has %d names, %s says %d", namesFile, len(entries), metaFile, ix.meta.Names)
	}
	ix.table = newNameTable(entries)
	if ix.store, err = openServedStore(dir, ix.meta.Docs, ix.meta.Format, o); err != nil {
		return nil, fmt.Errorf("index: open doc store: %w", err)
	}
	ro := map[string]interface{}{"read_only": true}
	// A read-only Bleve index opens all its segments before OpenUsing returns.
	done := serve(filepath.Join(dir, productsDir), o)
	ix.products, err = bleve.OpenUsing(filepath.Join(dir, productsDir), ro)
	if serr := done(); serr != nil {
		if err == nil {
			ix.products.Close()
		}
		err = serr
	}
	if err != nil {
		ix.store.close()
		return nil, fmt.Errorf("index: open products index: %w", err)
	}
	return ix, nil
}

// readNames reads names.txt: "<count>\t<name>" a line in format 1, where a name's docs fill
// blocks of blockSize; "<count>\t<blocks>\t<name>" in format 2, where an updated index's blocks
// may hold more or fewer.
func readNames(path string, format, blockSize int) ([]nameEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("index: open: %w", err)
	}
	defer f.Close()
	var out []nameEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		count, name, ok := strings.Cut(sc.Text(), "\t")
		n, err := strconv.Atoi(count)
		blocks := (n + blockSize - 1) / blockSize
		if ok && err == nil && format >= 2 {
			var nb string
			nb, name, ok = strings.Cut(name, "\t")
			blocks, err = strconv.Atoi(nb)
		}
		if !ok || err != nil || n <= 0 || blocks <= 0 {
			return nil, fmt.Errorf("index: open: %s line %d malformed", namesFile, len(out)+1)
		}
		out = append(out, nameEntry{name: name, count: n, blocks: blocks})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("index: open: %s: %w", namesFile, err)
	}
	return out, nil
}

// Close closes the index.
func (ix *Index) Close() error {
	return errors.Join(ix.products.Close(), ix.store.close())
}

// Search runs a query. Errors are storage failures (or a relevance sort without a manufacturer).
func (ix *Index) Search(ctx context.Context, q Query) (Page, error) {
	q.Limit = min(max(q.Limit, 1), 100)
	if q.Sort == "" {
		q.Sort = SortUpdatedAt
		if q.Manufacturer != "" {
			q.Sort = SortRelevance
		}
	}
	var cands []candidate
	if q.Manufacturer != "" {
		qn := Normalize(q.Manufacturer)
		if qn == "" {
			return Page{}, nil // nothing a name could match
		}
		var err error
		if cands, err = ix.cachedCandidates(ctx, qn); err != nil {
			return Page{}, err
		}
		if len(cands) == 0 {
			return Page{}, nil
		}
	}
	switch q.Sort {
	case SortRelevance:
		if q.Manufacturer == "" {
			return Page{}, errRelevanceNeedsManufacturer
		}
		return ix.searchRelevance(ctx, q, cands)
	case SortUpdatedAt:
		return ix.searchUpdated(ctx, q, cands)
	}
	return Page{}, fmt.Errorf("index: unknown sort %q", q.Sort)
}

// termQuery, termRange and conj are small helpers over Bleve's query constructors.
func termQuery(field, term string) query.Query {
	q := bleve.NewTermQuery(term)
	q.SetField(field)
	return q
}

// termRange matches terms in [lo, hi] (hiInclusive) or [lo, hi).
func termRange(field, lo, hi string, hiInclusive bool) query.Query {
	if hiInclusive && lo == hi {
		return termQuery(field, lo)
	}
	t, f := true, hiInclusive
	q := bleve.NewTermRangeInclusiveQuery(lo, hi, &t, &f)
	q.SetField(field)
	return q
}

func conj(qs ...query.Query) query.Query {
	if len(qs) == 1 {
		return qs[0]
	}
	return bleve.NewConjunctionQuery(qs...)
}

// filterQueries lists the conjuncts every search has: visibility for the tenant, then the filters.
func filterQueries(q Query) []query.Query {
	public := query.Query(termQuery(fVis, visPublic))
	var out []query.Query
	if q.Tenant == "" {
		out = append(out, public)
	} else {
		notShadowed := bleve.NewBooleanQuery()
		notShadowed.AddMust(public)
		notShadowed.AddMustNot(termQuery(fShadow, q.Tenant))
		out = append(out, bleve.NewDisjunctionQuery(notShadowed, termQuery(fVis, visTenant+q.Tenant)))
	}
	if q.TrustLevelMin > 0 {
		if q.TrustLevelMin > 5 {
			out = append(out, bleve.NewMatchNoneQuery())
		} else {
			out = append(out, termRange(fTrust, strconv.Itoa(q.TrustLevelMin), "5", true))
		}
	}
	if q.HasPassport != nil {
		out = append(out, termQuery(fPassport, boolTerm(*q.HasPassport)))
	}
	return out
}

// timeRangeQuery matches docs whose updated time key lies in [lo, hi].
func timeRangeQuery(lo, hi uint64) query.Query {
	cells := splitRange(lo, hi, levelShifts)
	qs := make([]query.Query, 0, len(cells))
	for _, c := range cells {
		if c.level == 0 {
			qs = append(qs, termRange(fUpdated, exactTerm(c.lo), exactTerm(c.hi), true))
		} else {
			qs = append(qs, termRange(fUpdatedLevels, levelTerm(c.level, c.lo), levelTerm(c.level, c.hi), true))
		}
	}
	if len(qs) == 1 {
		return qs[0]
	}
	return bleve.NewDisjunctionQuery(qs...)
}
