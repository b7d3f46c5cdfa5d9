package service_test

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/service"
)

// A product answer is read into a pooled buffer that Release gives back for
// the next read: answers read while others are released and reused, on
// every path (the canonical subject, an alias, a tenant's view, a private
// product, an edited answer, an absence), are the bytes they are when read
// alone.
func TestReleasedAnswersDoNotShare(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	svc, secrets := ingesttest.Service(t, snap)
	ctx := context.Background()
	type call struct {
		key, id string
		op      func(context.Context, domain.Caller, service.ProductArgs) (*service.Result, error)
	}
	var calls []call
	for _, key := range []string{ingesttest.KeyFull, ingesttest.KeyAcme} {
		for _, id := range []string{"gtin:09520123456788", "internal_sku:SKU-1", "9520123456788", "internal_sku:ACME-7",
			"gtin:09520000000011", "gtin:04006381333931", "gtin:09520123456795"} {
			for _, op := range []func(context.Context, domain.Caller, service.ProductArgs) (*service.Result, error){svc.Identity, svc.Passport, svc.Evidence} {
				calls = append(calls, call{key, id, op})
			}
		}
	}
	callers := map[string]domain.Caller{}
	for _, key := range []string{ingesttest.KeyFull, ingesttest.KeyAcme} {
		c, err := svc.Authenticate("Bearer " + secrets[key])
		if err != nil {
			t.Fatal(err)
		}
		callers[key] = c
	}
	answer := func(c call) []byte {
		id := c.id
		res, err := c.op(ctx, callers[c.key], service.ProductArgs{Identifier: &id})
		if err != nil {
			t.Errorf("%s %s: %v", c.key, c.id, err)
			return nil
		}
		env := res.AppendEnvelope(nil, "req_x", 0)
		res.Release()
		res.Release() // a second Release does nothing
		return env
	}
	want := make([][]byte, len(calls))
	for i, c := range calls {
		want[i] = answer(c)
	}

	// One answer held unreleased while others reuse the pool.
	id := calls[0].id
	held, err := calls[0].op(ctx, callers[calls[0].key], service.ProductArgs{Identifier: &id})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 20 {
				for i := range calls {
					i := (i + g*7 + round) % len(calls)
					if got := answer(calls[i]); !bytes.Equal(got, want[i]) {
						t.Errorf("%s %s: answer changed:\n%s\nwant\n%s", calls[i].key, calls[i].id, got, want[i])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if got := held.AppendEnvelope(nil, "req_x", 0); !bytes.Equal(got, want[0]) {
		t.Errorf("an answer held while others were released changed:\n%s\nwant\n%s", got, want[0])
	}
	held.Release()
}
