package service

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/productdata/pds/domain/gs1"
	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/service/keys"
	"github.com/productdata/pds/snapshots"
)

func buildOne(t *testing.T, manufacturer string) *Snapshot {
	t.Helper()
	in := t.TempDir()
	line := `{"identifiers":["gtin:09520123456788"],"manufacturer":"` + manufacturer + `","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z"}` + "\n"
	if err := os.WriteFile(filepath.Join(in, "products.ndjson"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "snap")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: out}); err != nil {
		t.Fatal(err)
	}
	s, err := OpenSnapshot(out, snapshots.OpenOptions{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A call in flight when the snapshot is swapped finishes on the old one;
// the old one is closed after the last such call, and new calls see the new.
func TestSwapKeepsCallsInFlight(t *testing.T) {
	a, b := buildOne(t, "Old Maker"), buildOne(t, "New Maker")
	path := filepath.Join(t.TempDir(), "keys.json")
	secret, _, err := keys.Add(path, keys.New{Tenant: "t", Scopes: []string{keys.ScopeRead}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ks, _ := keys.Load(path)
	svc := New(a, ks, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer svc.Close()
	c, err := svc.Authenticate("Bearer " + secret)
	if err != nil {
		t.Fatal(err)
	}

	inFlight, err := svc.snapshot() // a call that has started on a
	if err != nil {
		t.Fatal(err)
	}
	svc.Swap(b)
	if got := a.refs.Load(); got != 1 {
		t.Fatalf("old snapshot refs = %d, want 1 (the call in flight)", got)
	}
	// The call in flight can still read the old snapshot.
	if l, err := inFlight.find([]gs1.Reading{{Subject: gs1.Subject{Namespace: gs1.NSGTIN, Value: "09520123456788"}}}, ""); err != nil || l.status != "found" {
		t.Fatalf("in-flight read on the old snapshot: %v %v", l, err)
	}
	v, ok, err := inFlight.View('i', "gtin:09520123456788", "", nil)
	if err != nil || !ok || !strings.Contains(string(v), "Old Maker") {
		t.Fatalf("old view: %q %v %v", v, ok, err)
	}
	// New calls see the new snapshot.
	id := "09520123456788"
	res, err := svc.Identity(context.Background(), c, ProductArgs{Identifier: &id})
	if err != nil || !strings.Contains(string(res.Body), "New Maker") {
		t.Fatalf("new call: %s %v", res.Body, err)
	}
	inFlight.release()
	if got := a.refs.Load(); got != 0 {
		t.Fatalf("old snapshot refs = %d after the last call, want 0 (closed)", got)
	}
	if a.acquire() {
		t.Fatal("a retired snapshot was acquired again")
	}
}
