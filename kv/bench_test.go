package kv_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
)

// BenchmarkIdentityRead reads the identity views of a real snapshot (20,000
// products, a warm page cache) in a shuffled order, through a Reader as
// resolve does: from the snapshot's point index mapped, and read with
// pread. It is part of the read path's regression guard (make bench-go):
// allocs/op must stay 0.
func BenchmarkIdentityRead(b *testing.B) {
	const n = 20000
	snap := ingesttest.Build(b, ingesttest.SearchInput(b, n))
	m, err := snapshots.ReadManifest(snap)
	if err != nil {
		b.Fatal(err)
	}
	var keys [][]byte
	for i := range n {
		keys = append(keys, kv.AppendViewKey(nil, kv.TagIdentity, fmt.Sprintf("internal_sku:P-%04d", i), ""))
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for _, mapped := range []bool{true, false} {
		name := "pread"
		if mapped {
			name = "points"
		}
		b.Run(name, func(b *testing.B) {
			st := openStore(b, snap, m, 64<<20, mapped)
			defer st.Close()
			r, err := st.NewReader()
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			var buf []byte
			for _, k := range keys { // warm the page cache
				buf, _, _ = r.Get(k, buf[:0])
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				var ok bool
				buf, ok, err = r.Get(keys[i%n], buf[:0])
				if err != nil || !ok {
					b.Fatalf("%q: %v %v", keys[i%n], ok, err)
				}
				i++
			}
		})
	}
}
