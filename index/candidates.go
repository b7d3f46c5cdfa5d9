package index

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// nameTable is the small second structure: the distinct normalised manufacturer names of the
// index (names.txt; a name's id is its line number) with their doc counts, and lookups built when
// the index is opened, so that candidate names are found and ranked without touching the Bleve
// index:
//
//   - the ids in name order, for whole-name prefix retrieval;
//   - trigram → names, for similarity retrieval;
//   - the sorted (word, name) pairs, for word-prefix retrieval;
//   - a deletion neighbourhood of the distinct words (every word with up to its typo allowance of
//     letters deleted → the word), so a query word finds the words within its typo allowance with
//     a few map lookups (the symmetric-delete method) even when a typo broke most trigrams;
//   - per name, its trigram set, its form without spaces, its words and its sorted word set.
type nameTable struct {
	names    []string
	byName   []int32 // ids in name order
	counts   []int
	blocks   []int
	compacts []string
	wordSets []string
	words    [][]string
	triOff   []int32            // name i's trigrams are triAll[triOff[i]:triOff[i+1]]
	triAll   []uint64           //
	postings map[uint64][]int32 // trigram → ids of the names that have it, ascending
	byWord   []nameWord         // every (word, name) pair, by word then id
	dict     []string           // distinct words
	dictIDs  map[string][]int32 // distinct word → ids of the names that have it, ascending
	dels     map[string][]int32 // deletion variant → indices in dict
	scratch  sync.Pool          // *[]uint32 of len(names): shared-trigram counters
}

type nameWord struct {
	word string
	id   int32
}

func newNameTable(entries []nameEntry) *nameTable {
	n := len(entries)
	t := &nameTable{
		names:    make([]string, n),
		counts:   make([]int, n),
		blocks:   make([]int, n),
		compacts: make([]string, n),
		wordSets: make([]string, n),
		words:    make([][]string, n),
		triOff:   make([]int32, n+1),
		postings: map[uint64][]int32{},
		dictIDs:  map[string][]int32{},
		dels:     map[string][]int32{},
	}
	for i, e := range entries {
		t.names[i], t.counts[i], t.blocks[i] = e.name, e.count, e.blocks
		t.compacts[i] = compact(e.name)
		t.wordSets[i] = wordSet(e.name)
		t.words[i] = strings.Fields(e.name)
		tris := trigrams(e.name)
		t.triAll = append(t.triAll, tris...)
		t.triOff[i+1] = int32(len(t.triAll))
		for _, g := range tris {
			t.postings[g] = append(t.postings[g], int32(i))
		}
		for _, w := range t.words[i] {
			t.byWord = append(t.byWord, nameWord{w, int32(i)})
			if ids := t.dictIDs[w]; len(ids) == 0 || ids[len(ids)-1] != int32(i) {
				t.dictIDs[w] = append(ids, int32(i))
			}
		}
	}
	t.byName = make([]int32, n)
	for i := range t.byName {
		t.byName[i] = int32(i)
	}
	slices.SortFunc(t.byName, func(a, b int32) int { return strings.Compare(t.names[a], t.names[b]) })
	slices.SortFunc(t.byWord, func(a, b nameWord) int {
		return cmp.Or(strings.Compare(a.word, b.word), cmp.Compare(a.id, b.id))
	})
	t.byWord = slices.Compact(t.byWord)
	for w := range t.dictIDs {
		t.dict = append(t.dict, w)
	}
	slices.Sort(t.dict)
	for wi, w := range t.dict {
		if n := utf8.RuneCountInString(w); n <= maxFuzzyWord && maxEdits(n) > 0 {
			for _, d := range deletions(w, maxEdits(n)) {
				t.dels[d] = append(t.dels[d], int32(wi))
			}
		}
	}
	t.scratch.New = func() any { s := make([]uint32, n); return &s }
	return t
}

func (t *nameTable) trigramsOf(id int32) []uint64 { return t.triAll[t.triOff[id]:t.triOff[id+1]] }

// candidate is a distinct normalised manufacturer name that matches a query, with its score.
type candidate struct {
	id     int // line in names.txt, from 0
	name   string
	count  int // docs with this name (all visibilities)
	blocks int // blocks its docs are in
	score  float64
}

// candidateCmp is the relevance order of names: score descending, then name ascending.
func candidateCmp(a, b candidate) int {
	if a.score != b.score {
		return cmp.Compare(b.score, a.score)
	}
	return strings.Compare(a.name, b.name)
}

// Retrieval limits (per query reading).
const (
	maxFuzzyWord    = 32  // longer words are not looked up by typo allowance (nor indexed for it)
	maxQueryRunes   = 128 // a longer normalised query is cut to its words within this length
	retrieveSimilar = 64  // names with the highest trigram similarity
	retrievePrefix  = 32  // names starting with the query, in name order
	retrieveWord    = 16  // names with a word starting with a query word, per query word
	retrieveFuzzy   = 32  // names with a word within a query word's typo allowance, per such word
)

// candidates finds the names that match a normalised query, best first, at most
// tune.maxNames. Retrieval is cheap and generous — the names with the highest trigram
// similarity, the names that start with the query, the names with a word that starts with a
// query word or is within its typo allowance — and the short list it yields is ranked by rank.
func (ix *Index) candidates(_ context.Context, qn string) ([]candidate, error) {
	t := ix.table
	qn = cutQuery(qn)
	rk := newRanker(qn)
	ids := map[int32]bool{}
	for i := range rk.interps {
		t.retrieve(&rk.interps[i], ids, &rk.ed)
	}
	out := make([]candidate, 0, len(ids))
	for id := range ids {
		if s, ok := rk.rank(t, id, ix.tune.minSimilarity); ok {
			out = append(out, candidate{id: int(id), name: t.names[id], count: t.counts[id], blocks: t.blocks[id], score: s})
		}
	}
	slices.SortFunc(out, candidateCmp)
	if len(out) > ix.tune.maxNames {
		out = out[:ix.tune.maxNames]
	}
	return out, nil
}

// cutQuery shortens a normalised query to its words within maxQueryRunes runes (keeping at least
// the start of the first), so that no query costs more than a long manufacturer name.
func cutQuery(qn string) string {
	if utf8.RuneCountInString(qn) <= maxQueryRunes {
		return qn
	}
	rs := []rune(qn)[:maxQueryRunes+1]
	for i := len(rs) - 1; i > 0; i-- {
		if rs[i] == ' ' {
			return string(rs[:i])
		}
	}
	return string(rs[:maxQueryRunes])
}

// retrieve adds to ids the names worth ranking for one reading of the query.
func (t *nameTable) retrieve(in *interp, ids map[int32]bool, ed *editor) {
	// Trigram similarity: count shared trigrams per name, keep the best.
	countsP := t.scratch.Get().(*[]uint32)
	counts := *countsP
	var touched []int32
	for _, g := range in.tri {
		for _, id := range t.postings[g] {
			if counts[id] == 0 {
				touched = append(touched, id)
			}
			counts[id]++
		}
	}
	// Keep the retrieveSimilar most similar names: a min-heap on (sim, -id) of that size.
	best := make([]scored, 0, retrieveSimilar)
	for _, id := range touched {
		c := float64(counts[id])
		counts[id] = 0
		e := scored{id, c / (float64(len(in.tri)) + float64(t.triOff[id+1]-t.triOff[id]) - c)}
		if len(best) < retrieveSimilar {
			best = append(best, e)
			heapUp(best, len(best)-1)
		} else if e.better(best[0]) {
			best[0] = e
			heapDown(best, 0)
		}
	}
	t.scratch.Put(countsP)
	for _, s := range best {
		ids[s.id] = true
	}

	// Names that start with the query.
	i, _ := slices.BinarySearchFunc(t.byName, in.q, func(id int32, q string) int { return strings.Compare(t.names[id], q) })
	for n := 0; i < len(t.byName) && n < retrievePrefix && strings.HasPrefix(t.names[t.byName[i]], in.q); i, n = i+1, n+1 {
		ids[t.byName[i]] = true
	}

	for _, w := range in.words {
		runes := utf8.RuneCountInString(w)
		if runes < 3 || runes > maxFuzzyWord {
			continue
		}
		// Names with a word that starts with this query word.
		j, _ := slices.BinarySearchFunc(t.byWord, w, func(e nameWord, w string) int { return strings.Compare(e.word, w) })
		for n := 0; j < len(t.byWord) && n < retrieveWord && strings.HasPrefix(t.byWord[j].word, w); j, n = j+1, n+1 {
			ids[t.byWord[j].id] = true
		}
		// Names with a word within this query word's typo allowance.
		k := maxEdits(runes)
		var seen []int32
		for _, d := range deletions(w, k) {
			for _, wi := range t.dels[d] {
				if slices.Contains(seen, wi) {
					continue
				}
				seen = append(seen, wi)
				if ed.distance(w, t.dict[wi], k) > k {
					continue
				}
				for n, id := range t.dictIDs[t.dict[wi]] {
					if n == retrieveFuzzy {
						break
					}
					ids[id] = true
				}
			}
		}
	}
}

// scored is a retrieved name with its trigram similarity to the query.
type scored struct {
	id  int32
	sim float64
}

// better orders retrieval: higher similarity, then lower id (so retrieval is deterministic).
func (a scored) better(b scored) bool {
	return a.sim > b.sim || a.sim == b.sim && a.id < b.id
}

// heapUp and heapDown maintain h as a min-heap under better (the worst entry at h[0]).
func heapUp(h []scored, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h[p].better(h[i]) {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func heapDown(h []scored, i int) {
	for {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[worst].better(h[l]) {
			worst = l
		}
		if r < len(h) && h[worst].better(h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

// candidateCache keeps the candidate lists of recent queries: paging through a result set, and
// popular queries, compute them once. Lists are never modified after they are stored.
type candidateCache struct {
	mu    sync.Mutex
	max   int
	lists map[string][]candidate
	fifo  []string
}

func (ix *Index) cachedCandidates(ctx context.Context, qn string) ([]candidate, error) {
	c := &ix.cache
	c.mu.Lock()
	list, ok := c.lists[qn]
	c.mu.Unlock()
	if ok {
		return list, nil
	}
	list, err := ix.candidates(ctx, qn)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lists == nil {
		c.lists = map[string][]candidate{}
	}
	if _, ok := c.lists[qn]; !ok && c.max > 0 {
		if len(c.fifo) >= c.max {
			delete(c.lists, c.fifo[0])
			c.fifo = c.fifo[1:]
		}
		c.lists[qn] = list
		c.fifo = append(c.fifo, qn)
	}
	return list, nil
}

// ranker scores names against one normalised query.
type ranker struct {
	interps []interp
	ed      editor
}

// interp is one reading of the query: as typed, or without trailing words that look like
// mistyped legal forms ("acme gmbg", "initech ltf").
type interp struct {
	q        string
	wordSet  string
	words    []string
	tri      []uint64
	compact  string
	maxEdits int
	weight   float64 // applied to the score of matches of this reading
	full     bool    // the query as typed: exact and prefix matches count
}

func newInterp(q string, weight float64, full bool) interp {
	c := compact(q)
	return interp{q: q, wordSet: wordSet(q), words: strings.Fields(q), tri: trigrams(q), compact: c,
		maxEdits: maxEdits(utf8.RuneCountInString(c)), weight: weight, full: full}
}

// strippedWeight discounts matches that need the query's last words read as mistyped legal
// forms, so that a name matching the query as typed ranks first when the two are close.
const strippedWeight = 0.8

func newRanker(qn string) *ranker {
	r := &ranker{interps: []interp{newInterp(qn, 1, true)}}
	if s := stripLegalTypos(qn); s != qn {
		r.interps = append(r.interps, newInterp(s, strippedWeight, false))
	}
	return r
}

// stripLegalTypos drops the trailing words (never the first) that are one typo away from a
// legal-form word: "acme gmbg" → "acme", "initech ltf" → "initech".
func stripLegalTypos(qn string) string {
	words := strings.Fields(qn)
	n := len(words)
	for n > 1 && nearLegalForm(words[n-1]) {
		n--
	}
	return strings.Join(words[:n], " ")
}

func nearLegalForm(w string) bool {
	if legalForms[w] {
		return true
	}
	if utf8.RuneCountInString(w) < 2 {
		return false
	}
	var ed editor
	for _, f := range legalFormList {
		if ed.distance(w, f, 1) <= 1 {
			return true
		}
	}
	return false
}

// legalFormList is legalForms as a sorted slice.
var legalFormList = func() []string {
	var out []string
	for f := range legalForms {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}()

// rank scores name id of t against every reading of the query and keeps the best, or reports
// that the name does not match.
//
// A name matches a reading when it has the reading's words in any order, starts with it, has a
// trigram similarity of at least minSim with it, is within its typo allowance once spaces are
// removed ("hewlettpackard"), or when every word of the reading is one of the name's words
// within that word's typo allowance, or begins one (from three letters on).
//
// Scores, for the query as typed:
//
//   - 1 when the name is the query, 0.9999 when it has the query's words in another order;
//   - in (0.9, 0.9998] when the name is the query with typos (see typoOfWholeName): 0.9 + sim/10;
//   - in (0.5, 0.8999] when the name starts with the query: 0.5 + 0.4 × sim;
//   - in (0, 0.5] for the other matches: sim/2;
//
// where sim is the similarity of query and name (see similarity). A match of the query read
// without mistyped trailing legal forms scores as an "other" match, times strippedWeight. So
// exact matches come first, then the query's own name with a typo or two, then names that start
// with the query, then the rest by similarity.
// Scores are rounded to four decimals, the precision at which they are shown and compared.
func (r *ranker) rank(t *nameTable, id int32, minSim float64) (float64, bool) {
	name, nc := t.names[id], t.compacts[id]
	best, ok := 0.0, false
	for i := range r.interps {
		in := &r.interps[i]
		same := in.wordSet == t.wordSets[id]
		if in.full && same {
			if in.q == name {
				return 1, true
			}
			return 0.9999, true // the same words in another order
		}
		tri := trigramSimilarity(in.tri, t.trigramsOf(id))
		var s float64
		switch {
		case in.full && r.typoOfWholeName(in, t.words[id], nc):
			s = min(round4(0.9+r.similarity(tri, in.compact, nc)/10), 0.9998)
		case in.full && strings.HasPrefix(name, in.q):
			s = min(round4(0.5+0.4*r.similarity(tri, in.compact, nc)), 0.8999)
		case same || strings.HasPrefix(name, in.q) || tri >= minSim ||
			r.ed.distance(in.compact, nc, in.maxEdits) <= in.maxEdits || r.wordsMatch(in, t.words[id]):
			s = max(round4(in.weight*r.similarity(tri, in.compact, nc)/2), 0.0001)
		default:
			continue
		}
		if !ok || s > best {
			best, ok = s, true
		}
	}
	return best, ok
}

// similarity of a query and a name, from their trigram similarity tri (which ignores word order
// and tolerates missing or extra words) and their edit similarity without spaces ed,
// 1 − distance / length of the longer (which respects word order and tolerates typos in short
// words that break most of their trigrams): the larger of ed and the mean of the two. So a typo
// costs little either way, and of two names with the same words the one in the query's order
// ranks first.
func (r *ranker) similarity(tri float64, qc, nc string) float64 {
	longer := max(utf8.RuneCountInString(qc), utf8.RuneCountInString(nc))
	if longer == 0 {
		return tri
	}
	ed := 0.0
	if d := r.ed.distance(qc, nc, longer); d < longer {
		ed = 1 - float64(d)/float64(longer)
	}
	return max(ed, (tri+ed)/2)
}

// typoOfWholeName reports whether the name is the reading with typos: as many words, each
// word of the reading one of the name's within its allowance, and the whole within the
// reading's allowance once spaces are removed ("evergren snacks" for Evergreen Snacks, but not
// "siemens h" for Siemens, nor "volks" for Volkswagen).
func (r *ranker) typoOfWholeName(in *interp, nameWords []string, nc string) bool {
	return len(in.words) == len(nameWords) && r.ed.distance(in.compact, nc, in.maxEdits) <= in.maxEdits &&
		r.wordsMatch(in, nameWords)
}

// wordsMatch reports whether every word of the reading is one of the name's words, within the
// word's typo allowance, or the beginning of one (from three letters on).
func (r *ranker) wordsMatch(in *interp, nameWords []string) bool {
	for _, qw := range in.words {
		n := utf8.RuneCountInString(qw)
		e := maxEdits(n)
		ok := false
		for _, nw := range nameWords {
			if (n >= 3 && strings.HasPrefix(nw, qw)) || r.ed.distance(qw, nw, e) <= e {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }
