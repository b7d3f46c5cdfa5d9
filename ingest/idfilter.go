package ingest

import (
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// idFilter is the id filter of the duplicate checks: a split block Bloom
// filter. Each key sets one bit in each of the eight 32-bit words of one
// 32-byte block, chosen by the key's hash, so asking and adding touch one
// cache line. A classic Bloom filter of the same size (bits-and-blooms/bloom)
// touches a line of its own for each of its seven bits, most of them cache
// misses in a filter of 32 MiB: 2.6% of a 1,000,000-product build's CPU, on
// the goroutine that applies lines in order (BENCHMARKS.md). It is written
// here because the module proxy here serves no maintained library of this
// layout: greatroar/blobloom is refused, and bits-and-blooms has no blocked
// filter.
//
// Like any Bloom filter it never forgets a key: "not seen" is certain, "seen"
// is a maybe that the caller settles by reading the store.
type idFilter struct {
	blocks []filterBlock
}

type filterBlock [8]uint32

// filterSalts are odd constants, one per word of a block, that spread a
// key's 32 low hash bits over a bit of each word (the constants of the
// split block Bloom filter of Apache Parquet's format specification).
var filterSalts = [8]uint32{0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31}

// newIDFilter returns a filter of size bytes, rounded down to whole 32-byte
// blocks (one at least).
func newIDFilter(size int) *idFilter {
	n := max(size/32, 1)
	return &idFilter{blocks: make([]filterBlock, n)}
}

// locate returns the block of key's hash and the bit it sets in each word.
func (f *idFilter) locate(key []byte) (*filterBlock, filterBlock) {
	h := xxhash.Sum64(key)
	i, _ := bits.Mul64(h, uint64(len(f.blocks))) // h scaled to [0, len): the block
	var mask filterBlock
	lo := uint32(h)
	for w := range mask {
		mask[w] = 1 << ((lo * filterSalts[w]) >> 27)
	}
	return &f.blocks[i], mask
}

// test reports whether key may have been added; false is certain.
func (f *idFilter) test(key []byte) bool {
	b, mask := f.locate(key)
	for w := range mask {
		if b[w]&mask[w] == 0 {
			return false
		}
	}
	return true
}

// testAndAdd adds key and reports whether it may have been added before, as
// test would have.
func (f *idFilter) testAndAdd(key []byte) bool {
	b, mask := f.locate(key)
	seen := true
	for w := range mask {
		if b[w]&mask[w] == 0 {
			seen = false
			b[w] |= mask[w]
		}
	}
	return seen
}
