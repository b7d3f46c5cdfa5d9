package ingest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/productdata/pds/index"
	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
)

// An input directory in memory, grouped by product: what a test needs to
// write a change set and the full input it stands for.
type inputModel struct {
	global   map[string][]json.RawMessage // parties, sources, documents: by file, in order
	products []*productGroup              // in input order
}

type productGroup struct {
	ids                        []string // canonical identifiers
	product                    json.RawMessage
	claims, evidence, verdicts []json.RawMessage
}

func readLines(t *testing.T, path string) []json.RawMessage {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			out = append(out, json.RawMessage(bytes.Clone(sc.Bytes())))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// canon is enough of ingest's canonical form for generated subjects.
func canon(s string) string {
	ns, v, _ := strings.Cut(s, ":")
	if ns == "gtin" && len(v) < 14 {
		v = strings.Repeat("0", 14-len(v)) + v
	}
	return ns + ":" + v
}

func member(t *testing.T, line json.RawMessage, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	s, _ := m[name].(string)
	return s
}

func loadModel(t *testing.T, dir string) *inputModel {
	t.Helper()
	m := &inputModel{global: map[string][]json.RawMessage{}}
	for _, f := range []string{ingest.FileParties, ingest.FileSources, ingest.FileDocuments} {
		m.global[f] = readLines(t, filepath.Join(dir, f))
	}
	byID := map[string]*productGroup{}
	for _, line := range readLines(t, filepath.Join(dir, ingest.FileProducts)) {
		var p struct{ Identifiers []string }
		json.Unmarshal(line, &p)
		g := &productGroup{product: line}
		for _, id := range p.Identifiers {
			g.ids = append(g.ids, canon(id))
			byID[canon(id)] = g
		}
		m.products = append(m.products, g)
	}
	claimOf := map[string]*productGroup{}
	for _, line := range readLines(t, filepath.Join(dir, ingest.FileClaims)) {
		g := byID[canon(member(t, line, "subject"))]
		if g == nil {
			t.Fatalf("claim of no product: %s", line)
		}
		g.claims = append(g.claims, line)
		claimOf[member(t, line, "id")] = g
	}
	for _, line := range readLines(t, filepath.Join(dir, ingest.FileEvidence)) {
		g := claimOf[member(t, line, "claim_id")]
		if g == nil {
			t.Fatalf("evidence of no claim: %s", line)
		}
		g.evidence = append(g.evidence, line)
	}
	for _, line := range readLines(t, filepath.Join(dir, ingest.FileVerdicts)) {
		g := byID[canon(member(t, line, "subject"))]
		if g == nil {
			t.Fatalf("verdict of no product: %s", line)
		}
		g.verdicts = append(g.verdicts, line)
	}
	return m
}

func writeLines(t *testing.T, path string, lines []json.RawMessage) {
	t.Helper()
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// write writes the model as an input directory: the global files, and the
// products' records in group order.
func (m *inputModel) write(t *testing.T, dir string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	for f, lines := range m.global {
		writeLines(t, filepath.Join(dir, f), lines)
	}
	writeGroups(t, dir, m.products)
}

func writeGroups(t *testing.T, dir string, groups []*productGroup) {
	var products, claims, evidence, verdicts []json.RawMessage
	for _, g := range groups {
		products = append(products, g.product)
		claims = append(claims, g.claims...)
		evidence = append(evidence, g.evidence...)
		verdicts = append(verdicts, g.verdicts...)
	}
	writeLines(t, filepath.Join(dir, ingest.FileProducts), products)
	writeLines(t, filepath.Join(dir, ingest.FileClaims), claims)
	writeLines(t, filepath.Join(dir, ingest.FileEvidence), evidence)
	writeLines(t, filepath.Join(dir, ingest.FileVerdicts), verdicts)
}

// edit returns line with fn applied to its members.
func edit(t *testing.T, line json.RawMessage, fn func(m map[string]any)) json.RawMessage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	fn(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// changeSet is one night's change: the change set's directory and the full
// input it makes.
type changeSet struct {
	changes, merged *inputModel
	deletions       []json.RawMessage
	what            []string
}

// randomChanges changes, deletes and adds random products of m, and now
// and then a source's licence, a party's name or a document.
func randomChanges(t *testing.T, m *inputModel, rng *rand.Rand, round int) changeSet {
	cs := changeSet{changes: &inputModel{global: map[string][]json.RawMessage{}}, merged: &inputModel{global: map[string][]json.RawMessage{}}}
	for f, lines := range m.global {
		cs.merged.global[f] = slices.Clone(lines)
	}
	var kept, restated []*productGroup
	deleted := 0
	for i, g := range m.products {
		switch r := rng.IntN(100); {
		case r < 8: // changed
			ng := &productGroup{ids: g.ids, product: edit(t, g.product, func(p map[string]any) {
				p["brand"] = fmt.Sprintf("Brand %d-%d", round, i)
				p["updated_at"] = fmt.Sprintf("2026-11-%02dT0%d:00:00Z", 1+rng.IntN(28), rng.IntN(10))
			}), evidence: g.evidence}
			for _, c := range g.claims {
				ng.claims = append(ng.claims, edit(t, c, func(c map[string]any) {
					if o, ok := c["object"].(map[string]any); ok {
						if s, ok := o["value"].(string); ok {
							o["value"] = s + fmt.Sprintf(" (round %d)", round)
						}
					}
				}))
			}
			// A verdict less, and the order of the rest kept.
			ng.verdicts = g.verdicts
			if len(ng.verdicts) > 0 && rng.IntN(2) == 0 {
				ng.verdicts = ng.verdicts[:len(ng.verdicts)-1]
			}
			restated = append(restated, ng)
		case r < 11: // deleted, by any of its identifiers
			cs.deletions = append(cs.deletions, json.RawMessage(fmt.Sprintf(`{"identifier":%q}`, g.ids[rng.IntN(len(g.ids))])))
			deleted++
		default:
			kept = append(kept, g)
		}
	}
	// Added: copies of products under new identifiers, with new claim and
	// evidence ids, naming the same (kept) documents.
	for k := range 1 + len(m.products)/30 {
		g := m.products[rng.IntN(len(m.products))]
		suffix := fmt.Sprintf("-r%dn%d", round, k)
		id := fmt.Sprintf("internal_sku:ADDED%s", suffix)
		ng := &productGroup{ids: []string{id}, product: edit(t, g.product, func(p map[string]any) { p["identifiers"] = []string{id} })}
		for _, c := range g.claims {
			ng.claims = append(ng.claims, edit(t, c, func(c map[string]any) {
				c["id"] = c["id"].(string) + suffix
				c["subject"] = id
				for _, m := range []string{"supersedes", "superseded_by"} {
					if s, ok := c[m].(string); ok {
						c[m] = s + suffix
					}
				}
				if refs, ok := c["evidence_refs"].([]any); ok {
					for i := range refs {
						refs[i] = refs[i].(string) + suffix
					}
				}
			}))
		}
		for _, e := range g.evidence {
			ng.evidence = append(ng.evidence, edit(t, e, func(e map[string]any) {
				e["id"] = e["id"].(string) + suffix
				e["claim_id"] = e["claim_id"].(string) + suffix
			}))
		}
		for _, v := range g.verdicts {
			ng.verdicts = append(ng.verdicts, edit(t, v, func(v map[string]any) { v["subject"] = id }))
		}
		restated = append(restated, ng)
	}
	cs.changes.products = restated
	cs.merged.products = append(kept, restated...)
	cs.what = append(cs.what, fmt.Sprintf("%d changed or added, %d deleted", len(restated), deleted))
	// Now and then a source's licence, a party's name, a document.
	change := func(file string, fn func(map[string]any)) {
		lines := cs.merged.global[file]
		if len(lines) == 0 {
			return
		}
		i := rng.IntN(len(lines))
		lines[i] = edit(t, lines[i], fn)
		cs.changes.global[file] = append(cs.changes.global[file], lines[i])
		cs.what = append(cs.what, file+" "+member(t, lines[i], "id"))
	}
	if rng.IntN(2) == 0 {
		change(ingest.FileSources, func(s map[string]any) {
			s["licence_name"] = fmt.Sprintf("Terms %d", round)
			s["may_redistribute_verbatim"] = !(s["may_redistribute_verbatim"] == true)
		})
	}
	if rng.IntN(2) == 0 {
		change(ingest.FileParties, func(p map[string]any) { p["name"] = fmt.Sprintf("Party renamed %d", round) })
	}
	for range rng.IntN(3) {
		change(ingest.FileDocuments, func(d map[string]any) { d["retrieved_at"] = fmt.Sprintf("2026-11-%02dT12:00:00Z", 1+round) })
	}
	return cs
}

// writeChanges writes the change set's directory.
func (cs changeSet) writeChanges(t *testing.T, dir string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	for f, lines := range cs.changes.global {
		writeLines(t, filepath.Join(dir, f), lines)
	}
	writeGroups(t, dir, cs.changes.products)
	if len(cs.deletions) > 0 {
		writeLines(t, filepath.Join(dir, ingest.FileDeletions), cs.deletions)
	}
}

// TestIncrementalEqualsFull holds an incremental build to the answers of a
// full build of the input it stands for, night after night: random products
// changed, deleted and added (tenant-private ones and ones with superseded
// claims among them, as the generated input has), and now and then a
// source's licence, a party or a document changed.
func TestIncrementalEqualsFull(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			dir := t.TempDir()
			in := generated(t, 300)
			m := loadModel(t, in)
			base := filepath.Join(dir, "night-0")
			if _, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: base, Rejects: io.Discard, KeepRecords: true, Sequence: 1}); err != nil {
				t.Fatal(err)
			}
			for night := 1; night <= 3; night++ {
				cs := randomChanges(t, m, rng, night)
				changes := filepath.Join(dir, fmt.Sprintf("changes-%d", night))
				cs.writeChanges(t, changes)
				merged := filepath.Join(dir, fmt.Sprintf("merged-%d", night))
				cs.merged.write(t, merged)
				next := filepath.Join(dir, fmt.Sprintf("night-%d", night))
				var rejects bytes.Buffer
				sum, err := ingest.Run(context.Background(), ingest.Options{In: changes, Out: next, Base: base, Rejects: &rejects, Sequence: int64(1 + night)})
				if err != nil {
					t.Fatalf("night %d (%s): %v", night, strings.Join(cs.what, "; "), err)
				}
				full := filepath.Join(dir, fmt.Sprintf("full-%d", night))
				var fullRejects bytes.Buffer
				if _, err := ingest.Run(context.Background(), ingest.Options{In: merged, Out: full, Rejects: &fullRejects, Sequence: int64(1 + night)}); err != nil {
					t.Fatal(err)
				}
				if rejects.String() != "" || fullRejects.String() != "" {
					t.Logf("night %d rejects: incremental %q, full %q", night, rejects.String(), fullRejects.String())
				}
				t.Logf("night %d: %s; %+v", night, strings.Join(cs.what, "; "), *sum.Incremental)
				sameAnswers(t, next, full)
				base, m = next, cs.merged
			}
		})
	}
}

// sameAnswers compares every answer two snapshots give: every identifier's
// alias, every product's views for the public and every tenant, the
// sources, the manifest's counts, and search pages for every tenant.
func sameAnswers(t *testing.T, got, want string) {
	t.Helper()
	a, err := snapshots.Open(got, snapshots.OpenOptions{CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := snapshots.Open(want, snapshots.OpenOptions{CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	aliases := func(s *snapshots.Snapshot) map[string]kv.Alias {
		out := map[string]kv.Alias{}
		if err := s.Scan(kv.TagAlias, func(k, v []byte) error {
			al, err := kv.DecodeAlias(v)
			out[string(k)] = al
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	ga, wa := aliases(a), aliases(b)
	tenants := map[string]bool{"": true}
	subjects := map[string]bool{}
	for id, w := range wa {
		if g, ok := ga[id]; !ok || fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("alias %s: got %+v (%v), want %+v", id, g, ok, w)
		}
		subjects[w.Subject] = true
		if w.Owner != "" {
			tenants[w.Owner] = true
		}
		for _, vt := range w.ViewTenants {
			tenants[vt] = true
		}
	}
	for id := range ga {
		if _, ok := wa[id]; !ok {
			t.Errorf("alias %s: got %+v, want none", id, ga[id])
		}
	}
	for subject := range subjects {
		for tenant := range tenants {
			for _, tag := range []byte{kv.TagIdentity, kv.TagPassport, kv.TagEvidence} {
				gv, gok, gerr := a.View(tag, subject, tenant, nil)
				wv, wok, werr := b.View(tag, subject, tenant, nil)
				if gerr != nil || werr != nil {
					t.Fatalf("view %c %s %q: %v, %v", tag, subject, tenant, gerr, werr)
				}
				if gok != wok || !bytes.Equal(gv, wv) {
					t.Errorf("view %c of %s for %q:\n got %s\nwant %s", tag, subject, tenant, gv, wv)
				}
			}
		}
	}
	if gs, ws := fmt.Sprint(jsonOf(t, a.Sources)), fmt.Sprint(jsonOf(t, b.Sources)); gs != ws {
		t.Errorf("sources:\n got %s\nwant %s", gs, ws)
	}
	if g, w := fmt.Sprint(a.Manifest.Counts), fmt.Sprint(b.Manifest.Counts); g != w {
		t.Errorf("manifest counts: got %s, want %s", g, w)
	}
	ctx := context.Background()
	for tenant := range tenants {
		queries := []index.Query{{Tenant: tenant, Sort: index.SortUpdatedAt, Limit: 37, TrustLevelMin: -1}}
		for _, name := range []string{"GmbH", "Müller", "Foods"} {
			queries = append(queries, index.Query{Tenant: tenant, Manufacturer: name, Limit: 23, TrustLevelMin: -1})
		}
		for _, q := range queries {
			qa, qb := q, q
			for page := 0; ; page++ {
				pa, err := a.Search(ctx, qa)
				if err != nil {
					t.Fatal(err)
				}
				pb, err := b.Search(ctx, qb)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := fmt.Sprint(pa.Hits), fmt.Sprint(pb.Hits); g != w {
					t.Fatalf("search %+v page %d:\n got %s\nwant %s", q, page, g, w)
				}
				if (pa.Next == nil) != (pb.Next == nil) {
					t.Fatalf("search %+v page %d: one has a next page, the other not", q, page)
				}
				if pa.Next == nil {
					break
				}
				qa.After, qb.After = pa.Next, pb.Next
			}
		}
	}
}

func jsonOf(t *testing.T, v any) string {
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}
