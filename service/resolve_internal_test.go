package service

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortWantsIsKeyOrder checks that sortWants' word-wise comparison gives
// bytes.Compare's order, on keys that share long prefixes, differ in length,
// hold zero and 0xff bytes, and are shorter than the words compared.
func TestSortWantsIsKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte{0, 1, 'a', 'i', 'g', '0', '9', 0xff}
	prefixes := []string{"", "i\x00", "i\x00gtin:", "i\x00gtin:0952012", "a\x00internal_sku:P-"}
	var ws []want
	for range 5000 {
		k := []byte(prefixes[rng.IntN(len(prefixes))])
		for range rng.IntN(20) {
			k = append(k, alphabet[rng.IntN(len(alphabet))])
		}
		ws = append(ws, want{key: k})
	}
	got := slices.Clone(ws)
	sortWants(got)
	slices.SortStableFunc(ws, func(x, y want) int { return bytes.Compare(x.key, y.key) })
	for i := range ws {
		if !bytes.Equal(got[i].key, ws[i].key) {
			t.Fatalf("at %d: %q, want %q", i, got[i].key, ws[i].key)
		}
	}
}

func BenchmarkSortWants(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	src := make([]want, 1000)
	for i := range src {
		src[i] = want{key: []byte(fmt.Sprintf("i\x00gtin:%014d\x00", rng.Int64N(1e13))), at: i}
	}
	ws := make([]want, len(src))
	for b.Loop() {
		copy(ws, src)
		sortWants(ws)
	}
}
