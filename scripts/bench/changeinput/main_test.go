package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/productdata/pds/domain/gs1"
	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/input/synthetic"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
)

// TestChangeSetBuilds writes a change set that changes, deletes and adds
// products of a generated input, and builds it on a base with ingest
// --base: every line is accepted, the summary counts what the change set
// holds, and each added product resolves in the new snapshot (and not in
// the base) with a passport.
func TestChangeSetBuilds(t *testing.T) {
	dir := t.TempDir()
	in, base, changes, next := filepath.Join(dir, "in"), filepath.Join(dir, "base"), filepath.Join(dir, "changes"), filepath.Join(dir, "next")
	if err := synthetic.Generate(synthetic.Options{Products: 2000, Seed: 7, Out: in}); err != nil {
		t.Fatal(err)
	}
	var rejects bytes.Buffer
	if _, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: base, Rejects: &rejects, KeepRecords: true, Sequence: 1}); err != nil {
		t.Fatal(err)
	}
	counts, err := writeChanges(in, changes, mix{per10k: 500, deleteOneIn: 7, addPer10k: 100})
	if err != nil {
		t.Fatal(err)
	}
	if counts["added"] == 0 || counts["deletions"] == 0 {
		t.Fatalf("change set %v: want products added and deleted", counts)
	}
	sum, err := ingest.Run(context.Background(), ingest.Options{In: changes, Out: next, Base: base, Rejects: &rejects, Sequence: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rejects.Len() > 0 {
		t.Fatalf("rejected lines:\n%s", rejects.String())
	}
	for file, n := range sum.Rejected {
		if n > 0 {
			t.Errorf("%s: %d lines rejected", file, n)
		}
	}
	inc := sum.Incremental
	if inc == nil {
		t.Fatal("the build was not incremental")
	}
	if inc.Added != int64(counts["added"]) || inc.Deleted != int64(counts["deletions"]) ||
		inc.Changed != int64(counts["products"]-counts["added"]) || inc.Changed == 0 {
		t.Errorf("summary: %d changed, %d added, %d deleted; change set %v", inc.Changed, inc.Added, inc.Deleted, counts)
	}

	t.Logf("change set %v; summary: %d changed, %d added, %d deleted", counts, inc.Changed, inc.Added, inc.Deleted)

	// The added products are the last lines of products.ndjson.
	var addedIDs []string
	f, err := os.Open(filepath.Join(changes, "products.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, line := range lines[len(lines)-counts["added"]:] {
		var p struct {
			Identifiers []string `json:"identifiers"`
		}
		if err := json.Unmarshal(line, &p); err != nil {
			t.Fatal(err)
		}
		addedIDs = append(addedIDs, p.Identifiers...)
	}
	open := func(path string) *snapshots.Snapshot {
		s, err := snapshots.Open(path, snapshots.OpenOptions{CacheBytes: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	old, now := open(base), open(next)
	for _, id := range addedIDs {
		if v, ok := stringsCutGTIN(id); ok && !gs1.ValidCheckDigit(v) {
			t.Errorf("%s: bad check digit", id)
		}
		if _, ok, err := old.Alias(id); err != nil || ok {
			t.Errorf("%s in the base: %v, %v; want absent", id, ok, err)
		}
		al, ok, err := now.Alias(id)
		if err != nil || !ok {
			t.Errorf("%s in the new snapshot: %v, %v; want present", id, ok, err)
			continue
		}
		if _, ok, err := now.View(kv.TagPassport, al.Subject, al.Owner, nil); err != nil || !ok {
			t.Errorf("%s: passport %v, %v", id, ok, err)
		}
	}
}

// stringsCutGTIN is the digits of a gtin: identifier.
func stringsCutGTIN(id string) (string, bool) {
	if len(id) > 5 && id[:5] == "gtin:" {
		return id[5:], true
	}
	return "", false
}
