package service_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/internal/fixture"
	"github.com/productdata/pds/keys"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/snapshots"
)

// A snapshot's point index changes no answer: a service reading identity
// views from it, one reading them from Pebble (NoPoints), and one serving
// the same snapshot as a pds from before the index built it (no
// points/identity, the manifest written without it) answer every lookup
// and resolve byte for byte alike, for a public caller and for a tenant with
// views of its own, for products found directly, through an alias,
// privately, or not at all.
func TestPointIndexAnswersAsPebble(t *testing.T) {
	in := fixture.WriteCase(t, fixture.CaseFile("passport"))
	snap := fixture.Build(t, in)
	older := fixture.Build(t, in)
	m, err := snapshots.ReadManifest(older)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(older, "points")); err != nil {
		t.Fatal(err)
	}
	if err := snapshots.WriteManifest(older, m); err != nil {
		t.Fatal(err)
	}
	path, secrets := fixture.Keys(t)
	ks, err := keys.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var svcs [3]*service.Service
	for i, o := range []struct {
		dir        string
		noPoints   bool
		wantPoints bool
	}{{snap, false, true}, {snap, true, false}, {older, false, false}} {
		s, err := service.OpenSnapshot(o.dir, snapshots.OpenOptions{CacheBytes: 8 << 20, NoPoints: o.noPoints})
		if err != nil {
			t.Fatal(err)
		}
		if s.Points != o.wantPoints {
			t.Fatalf("service %d: the snapshot's Points is %v, want %v", i, s.Points, o.wantPoints)
		}
		svcs[i] = service.New(s, ks, nil, fixture.Logger(t))
		t.Cleanup(svcs[i].Close)
	}
	ids := []string{
		"gtin:9520123456788", "09520123456788", "9520123456788", "internal_sku:SKU-1", "SKU-1",
		"gtin:09520000000011", "internal_sku:ACME-7", "ACME-7", "gtin:04006381333931",
		"internal_sku:SITE-1", "gln:9520000000011", "https://id.gs1.org/01/09520123456788",
		"gtin:09520123456795", "internal_sku:NOPE", "not an identifier", "12345",
	}
	ctx := context.Background()
	for _, key := range []string{fixture.KeyFull, fixture.KeyAcme} {
		var callers [3]domain.Caller
		for i, svc := range svcs {
			if callers[i], err = svc.Authenticate("Bearer " + secrets[key]); err != nil {
				t.Fatal(err)
			}
		}
		answer := func(i int, op string, id string) string {
			svc, c := svcs[i], callers[i]
			var res *service.Result
			var err error
			switch op {
			case "identity":
				res, err = svc.Identity(ctx, c, service.ProductArgs{Identifier: &id})
			case "passport":
				res, err = svc.Passport(ctx, c, service.ProductArgs{Identifier: &id})
			case "evidence":
				res, err = svc.Evidence(ctx, c, service.ProductArgs{Identifier: &id})
			case "resolve":
				res, err = svc.Resolve(ctx, c, service.ResolveArgs{Identifiers: &ids})
			}
			if err != nil {
				return "error: " + err.Error()
			}
			defer res.Release()
			return string(res.Body) + string(res.Coverage)
		}
		for _, op := range []string{"identity", "passport", "evidence", "resolve"} {
			for _, id := range ids {
				with := answer(0, op, id)
				for i, what := range []string{"NoPoints", "a snapshot without the index"} {
					if other := answer(i+1, op, id); other != with {
						t.Errorf("%s, %s %q:\nwith the point index: %s\n%s: %s", key, op, id, with, what, other)
					}
				}
				if op == "resolve" {
					break
				}
			}
		}
	}
}

// A point index the manifest lists but this pds cannot read (here, one whose
// header was changed and the manifest written again over it, so that its
// checksum matches) refuses the snapshot, saying so, rather than serving it
// from Pebble: the manifest vouches for a file pds then cannot use.
func TestUnreadablePointIndexRefused(t *testing.T) {
	snap := fixture.Build(t, fixture.WriteCase(t, fixture.CaseFile("passport")))
	m, err := snapshots.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(snap, "points", "identity")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[0] = 'X'
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := snapshots.WriteManifest(snap, m); err != nil {
		t.Fatal(err)
	}
	_, err = service.OpenSnapshot(snap, snapshots.OpenOptions{CacheBytes: 1 << 20})
	if !errors.Is(err, snapshots.ErrInvalid) || !strings.Contains(err.Error(), "point index") {
		t.Fatalf("got %v, want a refusal naming the point index", err)
	}
	// --no-point-index does not open it, so the snapshot is served.
	s, err := service.OpenSnapshot(snap, snapshots.OpenOptions{CacheBytes: 1 << 20, NoPoints: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
