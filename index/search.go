package index

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
)

var (
	byDoc     = search.SortOrder{&search.SortDocID{}}
	byUpdated = search.SortOrder{
		&search.SortField{Field: fUpdated, Desc: true, Type: search.SortFieldAsString},
		&search.SortDocID{},
	}
)

// run executes one products query and returns the ordinals of its hits, in the query's order,
// and the total number of matches.
func (ix *Index) run(ctx context.Context, q query.Query, size int, order search.SortOrder, after []string) ([]uint32, uint64, error) {
	req := bleve.NewSearchRequestOptions(q, size, 0, false)
	req.SortByCustom(order.Copy()) // a sort field keeps the values of the doc it looks at: one per search
	req.Score = bleve.ScoreNone
	if after != nil {
		req.SearchAfter = after
	}
	res, err := ix.products.SearchInContext(ctx, req)
	if err != nil {
		return nil, 0, fmt.Errorf("index: search: %w", err)
	}
	out := make([]uint32, 0, len(res.Hits))
	for _, m := range res.Hits {
		ord, err := ix.store.ord(m.ID)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, ord)
	}
	return out, res.Total, nil
}

// afterDoc returns the ordinal a page continues after (-1: from the start) and, when that doc
// has name id nameID, its block. A position's Doc is used when it still names the position's
// subject; otherwise the subjects are searched (and the block is 0: reading starts at the
// name's first block, search-after skips the rest).
func (ix *Index) afterDoc(p *Position, nameID uint32) (int64, int, error) {
	if int(p.Doc) < ix.store.n {
		r, err := ix.store.record(p.Doc)
		if err != nil {
			return 0, 0, err
		}
		if r.subject == p.Subject {
			if ix.store.nameAt(int(p.Doc)) != nameID {
				r.block = 0
			}
			return int64(p.Doc), r.block, nil
		}
	}
	first, err := ix.store.firstAfter(p.Subject)
	return int64(first) - 1, 0, err
}

// pageRef is a hit before its record is read.
type pageRef struct {
	ord   uint32
	score float64
	name  string
}

// finish reads the records of the first limit refs and makes the page; when there are more refs,
// pos makes the position of the last hit shown.
func (ix *Index) finish(refs []pageRef, limit int, pos func(ref pageRef, r *record) *Position) (Page, error) {
	var page Page
	n := min(len(refs), limit)
	for i, ref := range refs[:n] {
		r, err := ix.store.record(ref.ord)
		if err != nil {
			return Page{}, err
		}
		h, err := r.hit()
		if err != nil {
			return Page{}, err
		}
		h.Score = ref.score
		page.Hits = append(page.Hits, h)
		if i == n-1 && len(refs) > limit {
			page.Next = pos(ref, &r)
		}
	}
	return page, nil
}

// searchRelevance pages through the products of the candidate names in relevance order: name
// score descending, name ascending, subject ascending. A big name's products are read from the
// blocks the page needs (see nameHits); a run of small names is read with one query (see
// smallNamesHits). So the cost of a page depends on the page size and the filters' selectivity,
// not on how many products a manufacturer has.
func (ix *Index) searchRelevance(ctx context.Context, q Query, cands []candidate) (Page, error) {
	filters := filterQueries(q)
	if !q.UpdatedSince.IsZero() {
		filters = append(filters, timeRangeQuery(timeKey(q.UpdatedSince), math.MaxUint64))
	}
	need := q.Limit + 1 // one more than the page, to know whether another page exists
	start, inside := 0, false
	after, block := int64(-1), 0
	if q.After != nil {
		start, inside = slices.BinarySearchFunc(cands, candidate{name: q.After.Name, score: q.After.Score}, candidateCmp)
		if inside {
			var err error
			if after, block, err = ix.afterDoc(q.After, uint32(cands[start].id)); err != nil {
				return Page{}, err
			}
		}
	}
	var refs []pageRef
	bs := ix.meta.BlockSize
	for i := start; i < len(cands) && len(refs) < need; {
		a, blk := int64(-1), 0
		if i == start && inside {
			a, blk = after, block
		}
		// A run of small names (one block each) is read with one query.
		j, sum := i, 0
		for j < len(cands) && cands[j].count <= bs && sum+cands[j].count <= ix.tune.smallBatch {
			sum += cands[j].count
			j++
		}
		var err error
		if j-i >= 2 {
			refs, err = ix.smallNamesHits(ctx, cands[i:j], a, filters, need, refs)
		} else {
			j = i + 1
			refs, err = ix.nameHits(ctx, cands[i], blk, a, filters, need, refs)
		}
		if err != nil {
			return Page{}, err
		}
		i = j
	}
	return ix.finish(refs, q.Limit, func(ref pageRef, r *record) *Position {
		return &Position{Score: ref.score, Name: ref.name, Subject: r.subject, Doc: ref.ord}
	})
}

// nameHits appends to refs, up to need in all, the visible, filtered products of one name in
// subject order, after doc after, starting at block startBlock. It reads a window of blocks (each
// a run of blockSize docs of the name in subject order), doubling the window while filters leave
// the page short; after tune.windowAttempts windows it reads the rest of the name at once.
func (ix *Index) nameHits(ctx context.Context, c candidate, startBlock int, after int64, filters []query.Query, need int, refs []pageRef) ([]pageRef, error) {
	bs := ix.meta.BlockSize
	nblocks := c.blocks
	width := max(1, (need-len(refs)+bs-1)/bs)
	for block, attempt := startBlock, 1; block < nblocks && len(refs) < need; attempt++ {
		var sel query.Query
		end := min(block+width, nblocks)
		if attempt >= ix.tune.windowAttempts && end < nblocks {
			// The rest of the name; search-after skips what came before.
			sel, end = termQuery(fName, c.name), nblocks
		} else {
			sel = termRange(fNameBlock, blockTerm(c.name, block), blockTerm(c.name, end), false)
		}
		var sa []string
		if after >= 0 {
			sa = []string{ix.store.id(uint32(after))}
		}
		got, _, err := ix.run(ctx, conj(append([]query.Query{sel}, filters...)...), need-len(refs), byDoc, sa)
		if err != nil {
			return nil, err
		}
		for _, ord := range got {
			refs = append(refs, pageRef{ord: ord, score: c.score, name: c.name})
			after = int64(ord)
		}
		block, width = end, width*2
	}
	return refs, nil
}

// smallNamesHits appends to refs, up to need in all, the visible, filtered products of a run of
// small names (each within one block) in relevance order, skipping those of the first name up to
// doc after. One query reads the run's matching docs (at most tune.smallBatch), which are then
// grouped by name (from the doc store) and ordered in Go.
func (ix *Index) smallNamesHits(ctx context.Context, run []candidate, after int64, filters []query.Query, need int, refs []pageRef) ([]pageRef, error) {
	names := make([]query.Query, len(run))
	size := 0
	for i, c := range run {
		names[i] = termQuery(fName, c.name)
		size += c.count
	}
	got, _, err := ix.run(ctx, conj(append([]query.Query{bleve.NewDisjunctionQuery(names...)}, filters...)...), size, byDoc, nil)
	if err != nil {
		return nil, err
	}
	byName := map[uint32][]uint32{} // name id → ordinals, ascending
	for _, ord := range got {
		id := ix.store.nameAt(int(ord))
		byName[id] = append(byName[id], ord)
	}
	for i, c := range run {
		for _, ord := range byName[uint32(c.id)] {
			if len(refs) == need {
				return refs, nil
			}
			if i == 0 && int64(ord) <= after {
				continue
			}
			refs = append(refs, pageRef{ord: ord, score: c.score, name: c.name})
		}
	}
	return refs, nil
}

// searchUpdated pages through matching products by updated_at descending, then subject
// ascending. When few docs can match it reads them all and sorts them in Go (by the updated
// times the doc store keeps in memory); otherwise it reads time windows from the newest end, each
// sized from the density of updates and widened while filters leave the page short, the last one
// unbounded. A window with more than tune.windowCap matches is sorted by Bleve instead.
func (ix *Index) searchUpdated(ctx context.Context, q Query, cands []candidate) (Page, error) {
	filters := filterQueries(q)
	total := ix.meta.Docs
	scores := map[uint32]float64{} // name id → score
	if q.Manufacturer != "" {
		names := make([]query.Query, len(cands))
		total = 0
		for i, c := range cands {
			names[i] = termQuery(fName, c.name)
			total += c.count
			scores[uint32(c.id)] = c.score
		}
		filters = append(filters, bleve.NewDisjunctionQuery(names...))
	}
	lo, hi := ix.meta.MinUpdated, ix.meta.MaxUpdated
	if !q.UpdatedSince.IsZero() {
		lo = max(lo, timeKey(q.UpdatedSince))
	}
	hasAfter, afterKey, afterOrd := false, uint64(0), int64(0)
	var sa []string
	if q.After != nil {
		hasAfter = true
		var err error
		if afterOrd, _, err = ix.afterDoc(q.After, noName); err != nil {
			return Page{}, err
		}
		afterKey = uint64(q.After.Updated) ^ (1 << 63)
		hi = min(hi, afterKey)
		id := "" // before every ID
		if afterOrd >= 0 {
			id = ix.store.id(uint32(afterOrd))
		}
		sa = []string{exactTerm(afterKey), id}
	}
	if total == 0 || lo > hi {
		return Page{}, nil
	}
	need := q.Limit + 1
	keys := ix.store.keyAt
	// isAfter reports whether doc ord comes after the position in this order.
	isAfter := func(ord uint32) bool {
		k := keys(int(ord))
		return !hasAfter || k < afterKey || k == afterKey && int64(ord) > afterOrd
	}
	// sorted orders ordinals by updated time descending, then ordinal.
	sorted := func(ords []uint32) []uint32 {
		ords = slices.DeleteFunc(ords, func(o uint32) bool { return !isAfter(o) })
		slices.SortFunc(ords, func(a, b uint32) int { return cmp.Or(cmp.Compare(keys(int(b)), keys(int(a))), cmp.Compare(a, b)) })
		return ords
	}
	var ords []uint32
	if total <= ix.tune.directMax {
		qs := filters
		if !q.UpdatedSince.IsZero() {
			qs = append(slices.Clone(filters), timeRangeQuery(lo, hi))
		}
		got, _, err := ix.run(ctx, conj(qs...), total, byDoc, nil)
		if err != nil {
			return Page{}, err
		}
		ords = sorted(got)
	} else {
		// Expect about twice the page in the first window if updates were spread evenly.
		width := float64(hi-lo) * float64(2*need) / float64(total)
		for cur, attempt := hi, 1; len(ords) < need; attempt++ {
			wlo := lo
			if attempt < ix.tune.windowAttempts && width < float64(cur-lo) {
				wlo = cur - uint64(max(width, 1))
			}
			window := conj(append(slices.Clone(filters), timeRangeQuery(wlo, cur))...)
			got, n, err := ix.run(ctx, window, ix.tune.windowCap, byDoc, nil)
			if err != nil {
				return Page{}, err
			}
			if n <= uint64(len(got)) {
				ords = append(ords, sorted(got)...)
			} else {
				// Too many to sort here: let Bleve sort the window by its doc values.
				if got, _, err = ix.run(ctx, window, need-len(ords), byUpdated, sa); err != nil {
					return Page{}, err
				}
				ords = append(ords, got...)
				width /= 4
			}
			if wlo <= lo {
				break
			}
			cur, width = wlo-1, width*4
		}
	}
	refs := make([]pageRef, 0, min(len(ords), need))
	for _, ord := range ords[:min(len(ords), need)] {
		refs = append(refs, pageRef{ord: ord, score: scores[ix.store.nameAt(int(ord))]})
	}
	return ix.finish(refs, q.Limit, func(ref pageRef, r *record) *Position {
		return &Position{Updated: int64(keys(int(ref.ord)) ^ (1 << 63)), Subject: r.subject, Doc: ref.ord}
	})
}
