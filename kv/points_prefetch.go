package kv

import (
	"encoding/binary"
	"runtime/debug"

	"github.com/cespare/xxhash/v2"
)

// prefetchWindow is how many keys a Reader's Prefetch overlaps: enough to
// keep a core's outstanding cache misses busy, few enough that what they
// bring in is still cached (and its pages still in the TLB) when the Gets
// come.
const prefetchWindow = 16

// touch loads, for each key, the memory a get of it reads first: its radix
// slot, its bucket's first entry, and the first two cache lines of that
// entry's record, one stage for all keys before the next, so that the
// loads of different keys overlap instead of each waiting on the one
// before; get then finds them cached. In a batch of random keys the three
// loads of a probe are cache (and TLB) misses in a file much larger than
// the caches, and they are most of its time. Nothing read here is trusted
// or returned; get checks what it uses. The sum only keeps the loads from
// being optimised away. Mapped indexes only; a fault is left for get to
// report.
func (p *points) touch(keys [][]byte) (sum uint64) {
	if p.mapped == nil {
		return 0
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r) // a bug here, not a file cut short
			}
		}
	}()
	var at [prefetchWindow]uint64
	keys = keys[:min(len(keys), len(at))]
	le := binary.LittleEndian
	const skip = ^uint64(0) // a key of another table
	for i, k := range keys {
		at[i] = skip
		if len(k) > 0 && k[0] == PointsTag {
			at[i] = bucket(xxhash.Sum64(k), p.bits)
		}
	}
	for i := range keys {
		if at[i] != skip {
			at[i] = uint64(le.Uint32(p.radix[at[i]*4:])) // the bucket's first entry
		}
	}
	for i := range keys {
		if at[i] >= p.count {
			at[i] = p.dataLen // nothing to touch
			continue
		}
		at[i] = le.Uint64(p.mapped[p.entriesAt+at[i]*pointEntrySize+8:])
	}
	for i := range keys {
		if at[i] < p.dataLen {
			at := p.dataAt + at[i]
			sum += uint64(p.mapped[at])
			if at+64 < p.dataAt+p.dataLen {
				sum += uint64(p.mapped[at+64])
			}
		}
	}
	return sum
}
