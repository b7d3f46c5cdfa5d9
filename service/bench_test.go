package service_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/ingest/input/synthetic"
	"github.com/productdata/pds/service"
)

// BenchmarkViewGet is the regression guard for the product read path: one
// identity, passport or evidence answer read from a real snapshot (5,000
// products, a warm block cache), as REST and MCP both run it, and released
// as they release it. Run it with -benchmem (make bench-go does): a change
// that adds allocations to this hot path shows in allocs/op.
func BenchmarkViewGet(b *testing.B) {
	const n = 5000
	snap := ingesttest.Build(b, ingesttest.SearchInput(b, n))
	svc, secrets := ingesttest.Service(b, snap)
	c, err := svc.Authenticate("Bearer " + secrets[ingesttest.KeyFull])
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("internal_sku:P-%04d", i)
	}
	ctx := context.Background()
	for _, v := range []struct {
		name string
		op   func(context.Context, domain.Caller, service.ProductArgs) (*service.Result, error)
	}{{"identity", svc.Identity}, {"passport", svc.Passport}, {"evidence", svc.Evidence}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				id := ids[i%n]
				i += 3 // every third product has a passport
				res, err := v.op(ctx, c, service.ProductArgs{Identifier: &id})
				if err != nil || len(res.Body) == 0 {
					b.Fatalf("%s %s: %v", v.name, id, err)
				}
				res.Release() // as the transports do once the answer is written
			}
		})
	}
}

// BenchmarkViewGetGenerated is BenchmarkViewGet on pds gen's data (5,000
// products, seed 1), whose views are as large as a catalogue's (a passport
// about 5.5 KB, an evidence answer about 11.5 KB): it shows what reading a
// view costs past the lookup, such as decompressing it. The products are
// read in a shuffled order, so each read is of another block.
func BenchmarkViewGetGenerated(b *testing.B) {
	const n = 5000
	in := b.TempDir()
	if err := synthetic.Generate(synthetic.Options{Products: n, Seed: 1, Out: in}); err != nil {
		b.Fatal(err)
	}
	snap := ingesttest.Build(b, in)
	svc, secrets := ingesttest.Service(b, snap)
	c, err := svc.Authenticate("Bearer " + secrets[ingesttest.KeyFull])
	if err != nil {
		b.Fatal(err)
	}
	var ids []string
	for _, line := range strings.Split(readFile(b, filepath.Join(in, "products.ndjson")), "\n") {
		if i := strings.Index(line, `"identifiers":["`); i >= 0 {
			id := line[i+len(`"identifiers":["`):]
			ids = append(ids, id[:strings.IndexByte(id, '"')])
		}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	ctx := context.Background()
	for _, v := range []struct {
		name string
		op   func(context.Context, domain.Caller, service.ProductArgs) (*service.Result, error)
	}{{"identity", svc.Identity}, {"passport", svc.Passport}, {"evidence", svc.Evidence}} {
		b.Run(v.name, func(b *testing.B) {
			for _, id := range ids { // warm the caches
				if res, err := v.op(ctx, c, service.ProductArgs{Identifier: &id}); err == nil {
					res.Release()
				}
			}
			b.ReportAllocs()
			cpu := ingesttest.CPUTime()
			defer ingesttest.ReportCPU(b, cpu)
			i := 0
			for b.Loop() {
				id := ids[i%len(ids)]
				i++
				res, err := v.op(ctx, c, service.ProductArgs{Identifier: &id})
				if err != nil || len(res.Body) == 0 {
					b.Fatalf("%s %s: %v", v.name, id, err)
				}
				res.Release()
			}
		})
	}
}

func readFile(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
