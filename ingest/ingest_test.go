package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
)

// entry is one key of a snapshot's store and its value, as the tests show
// them.
type entry struct {
	tag     byte
	subject string // the subject of a view, else ""
	text    string
}

// entries lists the aliases, views and sources of a snapshot, by table and
// key.
func entries(t testing.TB, snap string) []entry {
	t.Helper()
	st, err := kv.Open(filepath.Join(snap, "store"), 1<<20, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.UsePoints(filepath.Join(snap, snapshots.PointsPath), nil); err != nil {
		t.Fatal(err)
	}
	var all []entry
	for _, tag := range []byte{kv.TagAlias, kv.TagIdentity, kv.TagPassport, kv.TagEvidence, kv.TagSource} {
		err := st.Scan(tag, func(k, v []byte) error {
			var out strings.Builder
			e := entry{tag: tag}
			fmt.Fprintf(&out, "%c %s\n", tag, strings.ReplaceAll(string(k), "\x00", " | "))
			switch tag {
			case kv.TagAlias:
				fmt.Fprintf(&out, "  %s\n", strings.ReplaceAll(string(v), "\x00", " | "))
			case kv.TagSource:
				fmt.Fprintf(&out, "  %s\n", v)
			default:
				e.subject, _, _ = strings.Cut(string(k), "\x00")
				vw, err := kv.DecodeView(v)
				if err != nil {
					return err
				}
				if len(vw.Tenants) > 0 {
					fmt.Fprintf(&out, "  tenants with their own view: %s\n", strings.Join(vw.Tenants, ", "))
				}
				fmt.Fprintf(&out, "  body: %s\n", vw.Body)
				if len(vw.Coverage) > 0 {
					fmt.Fprintf(&out, "  coverage: %s\n", vw.Coverage)
				}
			}
			e.text = out.String()
			all = append(all, e)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return all
}

// dump lists every alias, view and source of a snapshot.
func dump(t testing.TB, snap string) string {
	t.Helper()
	var out strings.Builder
	for _, e := range entries(t, snap) {
		out.WriteString(e.text)
	}
	return out.String()
}

// TestStore runs the data-driven files under testdata/store. Each shows the
// store built from a case file part by part, so that a comment can say what
// each part shows:
//
//	build case=NAME    ingests testdata/cases/NAME.txt with the real ingest;
//	                   shows the rejected lines and the counts
//	aliases            every alias
//	views subject=S    the identity, passport and evidence views of S, for
//	                   every visibility
//	sources            every source record
//
// Every entry of the store must be shown by some directive of the file. The
// rules of passport selection have a case each in testdata/selection.
// Refresh the expected output with go test ./ingest -run TestStore -rewrite.
func TestStore(t *testing.T) {
	datadriven.Walk(t, "testdata/store", func(t *testing.T, path string) {
		var all []entry
		shown := map[int]bool{}
		show := func(keep func(entry) bool) string {
			var out strings.Builder
			for i, e := range all {
				if keep(e) {
					shown[i] = true
					out.WriteString(e.text)
				}
			}
			return out.String()
		}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "build":
				var name string
				td.ScanArgs(t, "case", &name)
				in := ingesttest.WriteCase(t, ingesttest.CaseFile(name))
				out := filepath.Join(t.TempDir(), "snap")
				var rejects bytes.Buffer
				sum, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: out, Rejects: &rejects})
				if err != nil {
					t.Fatal(err)
				}
				all = entries(t, out)
				return "rejects:\n" + rejects.String() + fmt.Sprintf("accepted: %v\nrejected: %v\n", sum.Accepted, sum.Rejected)
			case "aliases":
				return show(func(e entry) bool { return e.tag == kv.TagAlias })
			case "views":
				var subject string
				td.ScanArgs(t, "subject", &subject)
				return show(func(e entry) bool { return e.subject == subject })
			case "sources":
				return show(func(e entry) bool { return e.tag == kv.TagSource })
			default:
				t.Fatalf("unknown directive %q", td.Cmd)
				return ""
			}
		})
		for i, e := range all {
			if !shown[i] {
				t.Errorf("%s: no directive shows this entry:\n%s", path, e.text)
			}
		}
	})
}

// The views get each product's documents from a join of the documents with
// the products their evidence names, not by reading each by id, cut into
// parts by document id: documents named by one product, by both, by none,
// the evidence of one product and document split by another's, and ids with
// a zero byte in them (the join's keys end with the subject, so "d1\x00a"'s
// pairs sort before those of "d1") all reach the evidence views, whatever
// the number of parts.
func TestDocumentsJoinedToProducts(t *testing.T) {
	const src = "11111111-0000-4000-8000-000000000001"
	const a, b = "gtin:09520123456788", "gtin:04006381333931"
	claim := func(id, subject string) string {
		return `{"id":"` + id + `","subject":"` + subject + `","predicate":"p","object":{"value":1},"claim_type":"FACT","source_ref":"` + src + `","trust_level":"L2","retrieved_at":"2025-01-01T00:00:00Z"}` + "\n"
	}
	var docs, evs strings.Builder
	want := map[string]int{} // subject + " " + document id (as JSON writes it) -> links to it
	doc := func(id string) {
		docs.WriteString(`{"id":"` + id + `","source_id":"` + src + `","media_type":"text/html","content_hash":"sha256:0000000000000000000000000000000000000000000000000000000000000001","size":1,"retrieved_at":"2025-01-01T00:00:00Z"}` + "\n")
	}
	ev := func(claim, subject, doc string) {
		fmt.Fprintf(&evs, `{"id":"e%d","claim_id":"%s","document_id":"%s","locator":{"kind":"byte_range","start":0,"end":9}}`+"\n", evs.Len(), claim, doc)
		want[subject+" "+doc]++
	}
	for _, id := range []string{"d1", "d2", `d\u0000x`, `d1\u0000a`, "unused"} {
		doc(id)
	}
	ev("ca", a, "d1")
	ev("cb", b, "d1")
	ev("ca", a, "d2")
	ev("ca", a, "d1")
	ev("cb", b, `d\u0000x`)
	ev("cb", b, `d1\u0000a`)
	for i := range 3000 {
		id := fmt.Sprintf("m%04d", (i*7919)%3000) // not in id order
		doc(id)
		if i%2 == 0 {
			ev("ca", a, id)
		}
		if i%3 == 0 {
			ev("cb", b, id)
		}
	}
	files := map[string]string{
		"sources.ndjson": `{"id":"` + src + `","kind":"registry","origin":"https://x","trust_tier":2,"licence_name":"CC0","may_redistribute_verbatim":true,"may_redistribute_derived":true,"covers":{"namespaces":["gtin"]}}` + "\n",
		"products.ndjson": `{"identifiers":["` + a + `"],"manufacturer":"M","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z"}` + "\n" +
			`{"identifiers":["` + b + `"],"manufacturer":"M","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z"}` + "\n",
		"claims.ndjson":    claim("ca", a) + claim("cb", b),
		"documents.ndjson": docs.String(),
		"evidence.ndjson":  evs.String(),
	}
	in := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(in, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, parts := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("parts=%d", parts), func(t *testing.T) {
			defer ingest.SetJoinParts(parts)()
			out := filepath.Join(t.TempDir(), "snap")
			var rejects bytes.Buffer
			sum, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: out, Rejects: &rejects})
			if err != nil {
				t.Fatal(err)
			}
			if rejects.Len() > 0 || sum.Accepted["evidence.ndjson"] != int64(strings.Count(evs.String(), "\n")) {
				t.Fatalf("accepted %v, rejects %q", sum.Accepted, rejects.String())
			}
			got := map[string]int{}
			for _, e := range entries(t, out) {
				if e.tag != kv.TagEvidence {
					continue
				}
				for _, m := range documentID.FindAllStringSubmatch(e.text, -1) {
					got[e.subject+" "+m[1]]++
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("evidence links by subject and document:\n%v\nwant:\n%v", got, want)
			}
		})
	}
}

// documentID finds the id of each document an evidence view links to.
var documentID = regexp.MustCompile(`"document":\{"id":"((?:[^"\\]|\\.)*)"`)
