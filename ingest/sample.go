package ingest

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// subjectSample keeps the k canonical subjects whose hashes are the
// smallest (a bottom-k sample): a spread over the whole key space, whatever
// order the products come in, and the same sample for the same products.
// Products sorted by subject are grouped by their GTIN's company prefix, so
// the first ones in key order would all be one manufacturer's.
type subjectSample struct {
	k     int
	items sampleHeap
}

type sampleItem struct {
	hash    uint64
	subject string
}

func compareSample(a, b sampleItem) int {
	return cmp.Or(cmp.Compare(a.hash, b.hash), cmp.Compare(a.subject, b.subject))
}

// sampleHeap is a max-heap: its top is the item the next smaller one
// replaces.
type sampleHeap []sampleItem

func (h sampleHeap) Len() int           { return len(h) }
func (h sampleHeap) Less(i, j int) bool { return compareSample(h[i], h[j]) > 0 }
func (h sampleHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sampleHeap) Push(x any)        { *h = append(*h, x.(sampleItem)) }
func (h *sampleHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newSubjectSample(k int) *subjectSample { return &subjectSample{k: k} }

// add offers a subject to the sample.
func (s *subjectSample) add(subject string) {
	it := sampleItem{xxhash.Sum64String(subject), subject}
	switch {
	case len(s.items) < s.k:
		heap.Push(&s.items, it)
	case compareSample(it, s.items[0]) < 0:
		s.items[0] = it
		heap.Fix(&s.items, 0)
	}
}

// smallest returns the n subjects of the sample whose hashes are the
// smallest: the bottom-n sample, which a sample of n would have kept.
func (s *subjectSample) smallest(n int) map[string]bool {
	items := slices.Clone(s.items)
	slices.SortFunc(items, compareSample)
	out := make(map[string]bool, min(n, len(items)))
	for _, it := range items[:min(n, len(items))] {
		out[it.subject] = true
	}
	return out
}

// subjects returns the sampled subjects in key order.
func (s *subjectSample) subjects() []string {
	out := make([]string, len(s.items))
	for i, it := range s.items {
		out[i] = it.subject
	}
	slices.Sort(out)
	return out
}
