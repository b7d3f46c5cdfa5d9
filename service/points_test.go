package service_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
	"github.com/productdata/pds/snapshots"
)

// How a snapshot's views are stored changes no answer: a service reading a
// format 4 snapshot with its point index mapped, one reading it with pread
// (NoPoints), the same two reading a night's snapshot whose point index is
// the base's under a layer, and four serving format 3 and format 2 snapshots of the same
// input, built by the pds before format 4 (testdata/older-formats.md),
// with their point index and from Pebble alone, answer every lookup and resolve byte for byte
// alike, for a public caller and for a tenant with views of its own, for
// products found directly, through an alias, privately, or not at all.
func TestEveryReadPathAnswersAlike(t *testing.T) {
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
	snap := ingesttest.Build(t, in)
	// A night that computes every product again: its point index is the
	// base's with a layer that holds every identity view anew.
	layered := ingesttest.BuildNight(t, in)
	if _, err := os.Stat(filepath.Join(layered, filepath.FromSlash(snapshots.PointsPath)+".1")); err != nil {
		t.Fatalf("the night's point index has no layer: %v", err)
	}
	older := filepath.Join("testdata", "format2-passport")
	format3 := filepath.Join("testdata", "format3-passport")
	for dir, format := range map[string]int{snap: snapshots.FormatVersion, format3: snapshots.FormatChunks, older: snapshots.FormatBLAKE3} {
		if m, err := snapshots.ReadManifest(dir); err != nil || m.FormatVersion != format {
			t.Fatalf("%s: format %d (%v), want %d", dir, m.FormatVersion, err, format)
		}
	}
	path, secrets := ingesttest.Keys(t)
	ks, err := keys.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	readPaths := []struct {
		what       string
		dir        string
		noPoints   bool
		wantPoints bool
	}{
		{"format 4, point index mapped", snap, false, true},
		{"format 4, point index read with pread", snap, true, false},
		{"a night's layer on the point index, mapped", layered, false, true},
		{"a night's layer on the point index, read with pread", layered, true, false},
		{"format 3, point index mapped", format3, false, true},
		{"format 3, Pebble alone", format3, true, false},
		{"format 2, point index mapped", older, false, true},
		{"format 2, Pebble alone", older, true, false},
	}
	svcs := make([]*service.Service, len(readPaths))
	for i, o := range readPaths {
		s, err := service.OpenSnapshot(o.dir, snapshots.OpenOptions{CacheBytes: 8 << 20, NoPoints: o.noPoints})
		if err != nil {
			t.Fatalf("%s: %v", o.what, err)
		}
		if s.Points != o.wantPoints {
			t.Fatalf("%s: the snapshot's Points is %v, want %v", o.what, s.Points, o.wantPoints)
		}
		svcs[i] = service.New(s, ks, nil, ingesttest.Logger(t))
		t.Cleanup(svcs[i].Close)
	}
	ids := []string{
		"gtin:9520123456788", "09520123456788", "9520123456788", "internal_sku:SKU-1", "SKU-1",
		"gtin:09520000000011", "internal_sku:ACME-7", "ACME-7", "gtin:04006381333931",
		"internal_sku:SITE-1", "gln:9520000000011", "https://id.gs1.org/01/09520123456788",
		"gtin:09520123456795", "internal_sku:NOPE", "not an identifier", "12345",
	}
	ctx := context.Background()
	for _, key := range []string{ingesttest.KeyFull, ingesttest.KeyAcme} {
		callers := make([]domain.Caller, len(svcs))
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
				for i := 1; i < len(svcs); i++ {
					if other := answer(i, op, id); other != with {
						t.Errorf("%s, %s %q:\n%s: %s\n%s: %s", key, op, id, readPaths[0].what, with, readPaths[i].what, other)
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
// checksum matches) refuses the snapshot, saying so, mapped or not: the
// manifest vouches for a file pds then cannot use, and a format 4 store
// keeps its identity views there alone.
func TestUnreadablePointIndexRefused(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
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
	for _, noPoints := range []bool{false, true} {
		_, err = service.OpenSnapshot(snap, snapshots.OpenOptions{CacheBytes: 1 << 20, NoPoints: noPoints})
		if !errors.Is(err, snapshots.ErrInvalid) || !strings.Contains(err.Error(), "point index") {
			t.Fatalf("NoPoints %v: got %v, want a refusal naming the point index", noPoints, err)
		}
	}
}

// A night that builds on the served snapshot links its point index into
// its own, which moves the file's change time: resolve and identity reads
// of the served snapshot go on, the same answers, their bytes checked
// again; a file written is still refused.
func TestReadsGoOnWhenANightLinksThePointIndex(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	svc, secrets := ingesttest.Service(t, snap)
	c, err := svc.Authenticate("Bearer " + secrets[ingesttest.KeyFull])
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"gtin:9520123456788", "internal_sku:SKU-1", "gtin:09520123456795"}
	ctx := context.Background()
	answers := func() string {
		t.Helper()
		res, err := svc.Resolve(ctx, c, service.ResolveArgs{Identifiers: &ids})
		if err != nil {
			t.Fatalf("resolve: %v", err)
		}
		defer res.Release()
		id := ids[0]
		one, err := svc.Identity(ctx, c, service.ProductArgs{Identifier: &id})
		if err != nil {
			t.Fatalf("identity: %v", err)
		}
		defer one.Release()
		return string(res.Body) + string(one.Body)
	}
	before := answers()
	points := filepath.Join(snap, filepath.FromSlash(snapshots.PointsPath))
	for i := range 2 {
		link := filepath.Join(t.TempDir(), "night-points")
		if err := os.Link(points, link); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			os.Remove(link) // unlinked, as when the night's build is removed
		}
		if after := answers(); after != before {
			t.Fatalf("after a link: %s, want %s", after, before)
		}
	}
}
