package service_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/internal/fixture"
	"github.com/productdata/pds/service"
)

// BenchmarkViewGet is #14's regression guard for the product read path: one
// identity, passport or evidence answer read from a real snapshot (5,000
// products, a warm block cache), as REST and MCP both run it, and released
// as they release it. Run it with -benchmem (make bench-go does): a change
// that adds allocations to this hot path shows in allocs/op.
func BenchmarkViewGet(b *testing.B) {
	const n = 5000
	snap := fixture.Build(b, fixture.SearchInput(b, n))
	svc, secrets := fixture.Service(b, snap)
	c, err := svc.Authenticate("Bearer " + secrets[fixture.KeyFull])
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
