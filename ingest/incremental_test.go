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
	"time"

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
			if rng.IntN(4) == 0 {
				// Deleted and restated both: restated.
				cs.deletions = append(cs.deletions, json.RawMessage(fmt.Sprintf(`{"identifier":%q}`, g.ids[0])))
			}
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
	if rng.IntN(3) == 0 {
		// A new source: one that covers products (every product's
		// coverage changes), or one that covers none.
		src := m.global[ingest.FileSources][rng.IntN(len(m.global[ingest.FileSources]))]
		covers := rng.IntN(2) == 0
		line := edit(t, src, func(s map[string]any) {
			s["id"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", round)
			if !covers {
				delete(s, "covers")
			}
		})
		cs.merged.global[ingest.FileSources] = append(cs.merged.global[ingest.FileSources], line)
		cs.changes.global[ingest.FileSources] = append(cs.changes.global[ingest.FileSources], line)
		cs.what = append(cs.what, fmt.Sprintf("a new source (covering products: %v)", covers))
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
// source's licence, a party or a document changed. The store is layered on
// the base's two nights running; the third night writes it whole.
func TestIncrementalEqualsFull(t *testing.T) {
	defer ingest.SetMaxStoreLayers(2)()
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
			kept := 0
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
				layered := keptStoreTables(t, base, next)
				if want := night % 3; sum.Incremental.StoreLayers != want || layered != (want > 0) {
					t.Errorf("night %d: the store holds %d layers (want %d); the base's tables kept: %v", night, sum.Incremental.StoreLayers, want, layered)
				}
				if got, want := pointLayers(t, base, next), night%3; got != want {
					t.Errorf("night %d: the point index has %d layers on the base's files, want %d", night, got, want)
				}
				if keptSearchIndex(t, base, next) {
					kept++
					if !strings.HasPrefix(sum.Incremental.SearchIndex, "updated: ") {
						t.Errorf("night %d kept the search index; the summary says %q", night, sum.Incremental.SearchIndex)
					}
				} else if !strings.HasPrefix(sum.Incremental.SearchIndex, "built whole: ") {
					t.Errorf("night %d built the search index whole; the summary says %q", night, sum.Incremental.SearchIndex)
				}
				base, m = next, cs.merged
			}
			t.Logf("%d of 3 nights kept the base's search index", kept)
			if kept == 0 {
				t.Error("no night kept the base's search index: every one was built whole")
			}
		})
	}
}

// keptStoreTables reports whether every store table of snapshot base is
// one of next's, the same file (linked), as a store layered on base's has.
func keptStoreTables(t *testing.T, base, next string) bool {
	t.Helper()
	tables, err := filepath.Glob(filepath.Join(base, snapshots.StoreDir, "*.sst"))
	if err != nil || len(tables) == 0 {
		t.Fatalf("%s: no store tables (%v)", base, err)
	}
	for _, p := range tables {
		a, errA := os.Stat(p)
		b, errB := os.Stat(filepath.Join(next, snapshots.StoreDir, filepath.Base(p)))
		if errA != nil || errB != nil || !os.SameFile(a, b) {
			return false
		}
	}
	return true
}

// pointLayers is how many layers snapshot next's point index has
// (points/identity.1 and on), checking that every file of it but the
// newest layer is base's own (linked) when it has any.
func pointLayers(t *testing.T, base, next string) int {
	t.Helper()
	at := func(dir string, i int) string {
		p := filepath.Join(dir, filepath.FromSlash(snapshots.PointsPath))
		if i > 0 {
			p += fmt.Sprintf(".%d", i)
		}
		return p
	}
	n := 0
	for {
		if _, err := os.Stat(at(next, n+1)); err != nil {
			break
		}
		n++
	}
	for i := 0; i < n; i++ {
		a, errA := os.Stat(at(base, i))
		b, errB := os.Stat(at(next, i))
		if errA != nil || errB != nil || !os.SameFile(a, b) {
			t.Errorf("%s: point index file %d is not the base's (%v, %v)", next, i, errA, errB)
		}
	}
	return n
}

// keptSearchIndex reports whether the search index of snapshot next kept the Bleve segment of
// base's whole build (the same file, linked, beside a segment of its own) instead of being built
// whole.
func keptSearchIndex(t *testing.T, base, next string) bool {
	t.Helper()
	segments := func(dir string) []string {
		found, err := filepath.Glob(filepath.Join(dir, snapshots.IndexDir, "products.bleve", "*", "*.zap"))
		if err != nil || len(found) == 0 {
			t.Fatalf("%s: no search index segment (%v)", dir, err)
		}
		slices.Sort(found)
		return found
	}
	a, b := segments(base), segments(next)
	if len(b) < 2 || filepath.Base(a[0]) != filepath.Base(b[0]) {
		return false
	}
	x, errX := os.ReadFile(a[0])
	y, errY := os.ReadFile(b[0])
	if errX != nil || errY != nil {
		t.Fatal(errX, errY)
	}
	if !bytes.Equal(x, y) {
		return false
	}
	if !sameInode(t, a[0], b[0]) {
		t.Errorf("%s kept the base's segment %s as a copy, not linked", next, filepath.Base(a[0]))
	}
	return true
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
	// Every table as a whole, so that a view no answer reaches (one of a
	// product deleted, or for a tenant it no longer has) is found too.
	table := func(s *snapshots.Snapshot, tag byte) map[string]string {
		out := map[string]string{}
		if err := s.Scan(tag, func(k, v []byte) error { out[string(k)] = string(v); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tag := range []byte{kv.TagIdentity, kv.TagPassport, kv.TagEvidence, kv.TagSource} {
		gt, wt := table(a, tag), table(b, tag)
		for k, v := range gt {
			if w, ok := wt[k]; !ok || v != w {
				t.Errorf("table %c, key %q: got %.80s, want %.80s (%v)", tag, k, v, w, ok)
			}
		}
		for k := range wt {
			if _, ok := gt[k]; !ok {
				t.Errorf("table %c, key %q: missing", tag, k)
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
		yes := true
		queries := []index.Query{
			{Tenant: tenant, Sort: index.SortUpdatedAt, Limit: 37, TrustLevelMin: -1},
			{Tenant: tenant, Sort: index.SortUpdatedAt, Limit: 37, TrustLevelMin: 3},
			{Tenant: tenant, Sort: index.SortUpdatedAt, Limit: 37, TrustLevelMin: -1, HasPassport: &yes},
			{Tenant: tenant, Sort: index.SortUpdatedAt, Limit: 37, TrustLevelMin: -1, UpdatedSince: time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC)},
		}
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

// TestChangeSetLinesThatAreRefused holds the rejects particular to a change
// set: each names its file and line and says why, and the build goes on.
func TestChangeSetLinesThatAreRefused(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: "../sample-input", Out: base, Rejects: io.Discard, KeepRecords: true, Sequence: 1}); err != nil {
		t.Fatal(err)
	}
	changes := filepath.Join(dir, "changes")
	os.Mkdir(changes, 0o755)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(changes, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(ingest.FileDeletions, `{"identifier":"gtin:9520123450106"}
{"identifier":"gtin:09520123450106"}
{"identifier":"gtin:00000000000000"}
{"identifier":"not a subject"}
`)
	write(ingest.FileProducts, `{"identifiers":["gtin:09520123456788"],"manufacturer":"Havregården Oat Works AB","trust_level":"L4","status":"active","updated_at":"2026-11-20T09:30:00Z"}
{"identifiers":["gtin:09520123456788"],"manufacturer":"Again","trust_level":"L4","status":"active","updated_at":"2026-11-20T09:30:00Z"}
{"identifiers":["internal_sku:NRP-4711-Blue","gtin:09520123450304"],"manufacturer":"Two in one","trust_level":"L1","status":"active","updated_at":"2026-11-20T09:30:00Z"}
`)
	write(ingest.FileClaims, `{"id":"clm_new_1","subject":"gtin:09520123450304","predicate":"name","object":{"value":"x","unit":null,"language":"en"},"claim_type":"FACT","method":null,"method_version":null,"source_ref":"d0465c85-9bf3-50ea-85fe-7255399ea11e","publisher_ref":null,"evidence_refs":[],"verification_status":"registry_verified","verification_method":"registry_lookup","trust_level":"L5","confidence":1,"published_at":null,"retrieved_at":"2026-11-01T00:00:00Z","valid_from":null,"valid_to":null,"supersedes":null,"superseded_by":null}
`)
	var rejects bytes.Buffer
	sum, err := ingest.Run(context.Background(), ingest.Options{In: changes, Out: filepath.Join(dir, "next"), Base: base, Rejects: &rejects, Sequence: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"deletions.ndjson:2: product gtin:09520123450106 is deleted by line 1 already",
		"deletions.ndjson:3: identifier gtin:00000000000000 names no product of the base build",
		`deletions.ndjson:4: identifier "not a subject"`,
		"products.ndjson:2: identifier gtin:09520123456788 already names product gtin:09520123456788 (line 1)",
		"products.ndjson:3: identifiers name two products of the base build, internal_sku:NRP-4711-Blue and gtin:09520123450304",
		"claims.ndjson:1: subject gtin:09520123450304 names product gtin:09520123450304 of the base build, which this change set does not restate in products.ndjson",
	} {
		if !strings.Contains(rejects.String(), want) {
			t.Errorf("rejects lack %q:\n%s", want, rejects.String())
		}
	}
	if inc := sum.Incremental; inc == nil || inc.Changed != 1 || inc.Deleted != 1 {
		t.Errorf("summary: %+v", inc)
	}
}

// TestIncrementalBuildNeedsKeptRecords: a base built without
// --keep-records, deletions in a full build, and --dictionaries-from with
// --base are each refused before anything is built.
func TestIncrementalBuildNeedsKeptRecords(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: "../sample-input", Out: base, Rejects: io.Discard}); err != nil {
		t.Fatal(err)
	}
	changes := filepath.Join(dir, "changes")
	os.Mkdir(changes, 0o755)
	os.WriteFile(filepath.Join(changes, ingest.FileProducts), nil, 0o644)
	os.WriteFile(filepath.Join(changes, ingest.FileDeletions), []byte(`{"identifier":"gtin:09520123456788"}`+"\n"), 0o644)
	for _, c := range []struct {
		opts ingest.Options
		want string
	}{
		{ingest.Options{Base: base}, "its records were not kept"},
		{ingest.Options{}, "deletions.ndjson is read only by an incremental build (--base)"},
		{ingest.Options{Base: base, DictionariesFrom: base}, "uses its base's dictionaries"},
	} {
		c.opts.In, c.opts.Out, c.opts.Rejects = changes, filepath.Join(dir, "next"), io.Discard
		_, err := ingest.Run(context.Background(), c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.opts, err, c.want)
		}
		if _, err := os.Stat(c.opts.Out); !os.IsNotExist(err) {
			t.Errorf("%s was made", c.opts.Out)
		}
	}
}

// TestKilledBuildsRecordsAreRemoved: the kept records of a build that was
// killed (their temporary folder beside the snapshot, unlocked) are removed
// by the next build beside them, and a finished build leaves no temporary.
func TestKilledBuildsRecordsAreRemoved(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".night.records.tmp-01M8G381FE19CZ0XNJYGESJ5FA")
	if err := os.MkdirAll(filepath.Join(stale, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum, err := ingest.Run(context.Background(), ingest.Options{In: "../sample-input", Out: filepath.Join(dir, "base"), Rejects: io.Discard, KeepRecords: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sum.RemovedStale, stale) {
		t.Errorf("removed %v, want %s among them", sum.RemovedStale, stale)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if fmt.Sprint(names) != "[base base.records]" {
		t.Errorf("left beside the build: %v", names)
	}
}

// An incremental build is reproducible too: the same base and change set
// with the same sequence give the same bytes, every file of the layered
// store (the night's tables, MANIFEST and OPTIONS) and of the updated index
// among them, but the manifest's build id and creation time.
func TestIncrementalSameBytes(t *testing.T) {
	dir := t.TempDir()
	base, m := keptBase(t, dir)
	cs := randomChanges(t, m, rand.New(rand.NewPCG(5, 99)), 1)
	changes := filepath.Join(dir, "changes")
	cs.writeChanges(t, changes)
	var got []map[string][]byte
	for i := range 2 {
		if i > 0 { // the second build's ingest falls in a later second
			for now := time.Now().Unix(); time.Now().Unix() == now; {
				time.Sleep(20 * time.Millisecond)
			}
		}
		out := filepath.Join(dir, fmt.Sprint("next-", i))
		sum, err := ingest.Run(context.Background(), ingest.Options{In: changes, Out: out, Base: base, Rejects: io.Discard, Sequence: 2})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Incremental.StoreLayers != 1 {
			t.Fatalf("the store holds %d layers, want 1", sum.Incremental.StoreLayers)
		}
		got = append(got, files(t, out))
	}
	a, b := got[0], got[1]
	for name, want := range a {
		g, ok := b[name]
		if name == "manifest.json" {
			g, want = withoutBuild(t, g), withoutBuild(t, want)
		}
		if !ok || !bytes.Equal(g, want) {
			t.Errorf("%s differs", name)
		}
	}
	if len(a) != len(b) {
		t.Errorf("%d files, then %d", len(a), len(b))
	}
}

// The base is usually the snapshot being served on the build host: a
// night's build made from it (which links its store tables) leaves it
// answering, views and searches alike.
func TestBaseServesOnWhileANightIsBuilt(t *testing.T) {
	dir := t.TempDir()
	base, m := keptBase(t, dir)
	served, err := snapshots.Open(base, snapshots.OpenOptions{CacheBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer served.Close()
	answer := func(when string) {
		t.Helper()
		if err := served.Check(); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		n := 0
		err := served.Scan(kv.TagAlias, func(k, v []byte) error {
			a, err := kv.DecodeAlias(v)
			if err != nil {
				return err
			}
			for _, tag := range []byte{kv.TagIdentity, kv.TagPassport, kv.TagEvidence} {
				if _, ok, err := served.View(tag, a.Subject, "", nil); err != nil || !ok && a.Owner == "" {
					return fmt.Errorf("view %c of %s: %v %v", tag, a.Subject, ok, err)
				}
			}
			n++
			return nil
		})
		if err != nil || n == 0 {
			t.Fatalf("%s: %d products read: %v", when, n, err)
		}
		if _, err := served.Search(context.Background(), index.Query{Sort: index.SortUpdatedAt, Limit: 20, TrustLevelMin: -1}); err != nil {
			t.Fatalf("%s: search: %v", when, err)
		}
	}
	answer("before the night's build")
	cs := randomChanges(t, m, rand.New(rand.NewPCG(7, 99)), 1)
	changes := filepath.Join(dir, "changes")
	cs.writeChanges(t, changes)
	next := filepath.Join(dir, "next")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: changes, Out: next, Base: base, Rejects: io.Discard, Sequence: 2}); err != nil {
		t.Fatal(err)
	}
	if !keptStoreTables(t, base, next) {
		t.Fatal("the night's store does not link the base's tables")
	}
	answer("after the night's build")
	if err := os.RemoveAll(next); err != nil {
		t.Fatal(err)
	}
	answer("after the night's build was removed")
}

// keptBase builds 300 generated products into dir/base, keeping its
// records, and returns it with the model of its input.
func keptBase(t *testing.T, dir string) (string, *inputModel) {
	t.Helper()
	return keptBaseOf(t, dir, 300)
}

// keptBaseOf is keptBase of n products.
func keptBaseOf(t *testing.T, dir string, n int) (string, *inputModel) {
	t.Helper()
	in := generated(t, n)
	m := loadModel(t, in)
	base := filepath.Join(dir, "base")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: base, Rejects: io.Discard, KeepRecords: true, Sequence: 1}); err != nil {
		t.Fatal(err)
	}
	return base, m
}
