package index

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// trigrams returns the sorted, de-duplicated trigram set of a normalised name, built the way
// PostgreSQL's pg_trgm does it: every word is padded with two spaces in front and one behind
// ("bosch" → "  b", " bo", "bos", "osc", "sch", "ch "), so word order does not matter and word
// starts weigh a little more than word ends. A trigram is packed into one uint64 (3 × 21 bits).
func trigrams(normalised string) []uint64 {
	var out []uint64
	for _, w := range strings.Fields(normalised) {
		a, b := rune(' '), rune(' ')
		for _, c := range w + " " {
			out = append(out, uint64(a)<<42|uint64(b)<<21|uint64(c))
			a, b = b, c
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// trigramSimilarity is |A ∩ B| / |A ∪ B| for two sorted trigram sets: 1 for equal sets, 0 when
// nothing is shared.
func trigramSimilarity(a, b []uint64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	shared := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			shared++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(shared) / float64(len(a)+len(b)-shared)
}

// editDistance is the optimal-string-alignment distance between two strings, counted in runes:
// insertions, deletions, substitutions and swaps of two neighbouring letters each cost one.
// It stops early and returns max+1 once the distance is known to exceed max.
func editDistance(s, t string, max int) int {
	var e editor
	return e.distance(s, t, max)
}

// editor computes edit distances with reusable buffers (one per goroutine).
type editor struct {
	a, b             []rune
	prev2, prev, cur []int
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func (e *editor) distance(s, t string, max int) int {
	if isASCII(s) && isASCII(t) {
		return osa(e, []byte(s), []byte(t), max)
	}
	e.a, e.b = append(e.a[:0], []rune(s)...), append(e.b[:0], []rune(t)...)
	return osa(e, e.a, e.b, max)
}

func osa[T byte | rune](e *editor, a, b []T, max int) int {
	if d := len(a) - len(b); d > max || -d > max {
		return max + 1
	}
	n := len(b) + 1
	if cap(e.cur) < n {
		e.prev2, e.prev, e.cur = make([]int, n), make([]int, n), make([]int, n)
	}
	prev2, prev, cur := e.prev2[:n], e.prev[:n], e.cur[:n]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > max {
			return max + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], max+1)
}

// maxEdits is how many typos a query word (or whole compact query) of n runes may carry and
// still match: none below three letters, one up to five, two from six on. Bleve's fuzzy
// queries are capped at two as well.
func maxEdits(n int) int {
	switch {
	case n < 3:
		return 0
	case n < 6:
		return 1
	default:
		return 2
	}
}

// wordSet is a normalised name's words sorted and joined by spaces: two names with the same
// words in any order have the same wordSet.
func wordSet(normalised string) string {
	w := strings.Fields(normalised)
	if len(w) < 2 {
		return normalised
	}
	slices.Sort(w)
	return strings.Join(w, " ")
}

// deletions returns s and every string made by deleting up to k (at most 2) of its runes,
// without repeats.
func deletions(s string, k int) []string {
	rs := []rune(s)
	out := []string{s}
	if k >= 1 {
		for i := range rs {
			out = append(out, string(rs[:i])+string(rs[i+1:]))
		}
	}
	if k >= 2 {
		for i := range rs {
			for j := i + 1; j < len(rs); j++ {
				out = append(out, string(rs[:i])+string(rs[i+1:j])+string(rs[j+1:]))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
