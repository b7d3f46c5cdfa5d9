package kv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortReadsIsKeyOrder checks that sortReads' word-wise comparison gives
// bytes.Compare's order, on keys that share long prefixes, differ in length,
// hold zero and 0xff bytes, and are shorter than the words compared.
func TestSortReadsIsKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte{0, 1, 'a', 'i', 'g', '0', '9', 0xff}
	prefixes := []string{"", "i\x00", "i\x00gtin:", "i\x00gtin:0952012", "a\x00internal_sku:P-"}
	var rs []batchRead
	for range 5000 {
		k := []byte(prefixes[rng.IntN(len(prefixes))])
		for range rng.IntN(20) {
			k = append(k, alphabet[rng.IntN(len(alphabet))])
		}
		rs = append(rs, batchRead{key: k})
	}
	got := slices.Clone(rs)
	sortReads(got)
	slices.SortStableFunc(rs, func(x, y batchRead) int { return bytes.Compare(x.key, y.key) })
	for i := range rs {
		if !bytes.Equal(got[i].key, rs[i].key) {
			t.Fatalf("at %d: %q, want %q", i, got[i].key, rs[i].key)
		}
	}
}

func BenchmarkSortReads(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	src := make([]batchRead, 1000)
	for i := range src {
		src[i] = batchRead{key: []byte(fmt.Sprintf("i\x00gtin:%014d\x00", rng.Int64N(1e13))), at: i}
	}
	rs := make([]batchRead, len(src))
	for b.Loop() {
		copy(rs, src)
		sortReads(rs)
	}
}
