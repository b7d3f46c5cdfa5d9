package ingest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/snapshots"
)

func build(t *testing.T, in string, strict bool) (string, ingest.Summary, string, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "snap")
	var rejects bytes.Buffer
	sum, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: out, Strict: strict, Rejects: &rejects})
	return out, sum, rejects.String(), err
}

// --strict fails on the first reject and publishes nothing, not even a
// temporary directory.
func TestStrict(t *testing.T) {
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
	out, _, rejects, err := build(t, in, true)
	if !errors.Is(err, ingest.ErrStrict) {
		t.Fatalf("err = %v, want ErrStrict", err)
	}
	if !strings.Contains(err.Error(), "sources.ndjson:5:") || strings.Count(rejects, "\n") != 1 {
		t.Errorf("strict should stop at the first reject (sources.ndjson:5); err %v, rejects %q", err, rejects)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 0 {
		t.Errorf("strict build left %v behind", entries)
	}
}

// The same input gives the same digest and the same answers; gzip input is
// read like plain input (the digest covers the bytes as stored, so it differs).
func TestDeterministicAndGzip(t *testing.T) {
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
	a, sa, _, err := build(t, in, false)
	if err != nil {
		t.Fatal(err)
	}
	b, sb, _, err := build(t, in, false)
	if err != nil {
		t.Fatal(err)
	}
	if sa.InputDigest != sb.InputDigest || !strings.HasPrefix(sa.InputDigest, "sha256:") {
		t.Errorf("digests %s and %s", sa.InputDigest, sb.InputDigest)
	}
	if sa.BuildID == sb.BuildID {
		t.Error("two builds share a build id")
	}
	if dump(t, a) != dump(t, b) {
		t.Error("same input, different answers")
	}
	// gzip every file
	gz := t.TempDir()
	files, _ := os.ReadDir(in)
	for _, f := range files {
		raw, _ := os.ReadFile(filepath.Join(in, f.Name()))
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(raw)
		w.Close()
		os.WriteFile(filepath.Join(gz, f.Name()+".gz"), buf.Bytes(), 0o644)
	}
	c, sc, _, err := build(t, gz, false)
	if err != nil {
		t.Fatal(err)
	}
	if dump(t, c) != dump(t, a) {
		t.Error("gzip input gives other answers")
	}
	if sc.Accepted["claims.ndjson"] != sa.Accepted["claims.ndjson"] {
		t.Errorf("accepted %v vs %v", sc.Accepted, sa.Accepted)
	}
	m, err := snapshots.Verify(a)
	if err != nil {
		t.Fatal(err)
	}
	if m.InputDigest != sa.InputDigest || m.Counts["products.ndjson"] != 5 || m.Rejected["claims.ndjson"] != 7 {
		t.Errorf("manifest %+v", m)
	}
}

func TestInputErrors(t *testing.T) {
	empty := t.TempDir()
	if _, _, _, err := build(t, empty, false); err == nil || !strings.Contains(err.Error(), "products.ndjson") {
		t.Errorf("no products.ndjson: %v", err)
	}
	both := t.TempDir()
	os.WriteFile(filepath.Join(both, "products.ndjson"), nil, 0o644)
	os.WriteFile(filepath.Join(both, "products.ndjson.gz"), nil, 0o644)
	if _, _, _, err := build(t, both, false); err == nil || !strings.Contains(err.Error(), "keep one") {
		t.Errorf("plain and gzip: %v", err)
	}
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
	out, _, _, err := build(t, in, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: out}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("existing output: %v", err)
	}
	long := t.TempDir()
	os.WriteFile(filepath.Join(long, "products.ndjson"), []byte(`{"x":"`+strings.Repeat("a", 2<<20)+`"}`+"\n"+`{"identifiers":["gtin:09520123456788"],"manufacturer":"M","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z"}`+"\n"), 0o644)
	_, sum, rejects, err := build(t, long, false)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Accepted["products.ndjson"] != 1 || !strings.Contains(rejects, "products.ndjson:1: line is longer than") {
		t.Errorf("long line: %v %q", sum.Accepted, rejects)
	}
}

// A reject deep in a file that spans many batches: --strict stops there and
// publishes nothing; otherwise every other line is accepted, in order.
func TestManyBatches(t *testing.T) {
	in := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		if i == 1700 {
			b.WriteString("{not json\n")
			continue
		}
		fmt.Fprintf(&b, `{"identifiers":["internal_sku:P-%d"],"manufacturer":"M","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z"}`+"\n", i)
	}
	os.WriteFile(filepath.Join(in, "products.ndjson"), []byte(b.String()), 0o644)
	out, _, rejects, err := build(t, in, true)
	if !errors.Is(err, ingest.ErrStrict) || !strings.Contains(err.Error(), "products.ndjson:1700:") {
		t.Fatalf("strict: %v", err)
	}
	if _, statErr := os.Stat(out); statErr == nil || strings.Count(rejects, "\n") != 1 {
		t.Fatalf("strict published something or reported more: %q", rejects)
	}
	_, sum, rejects, err := build(t, in, false)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Accepted["products.ndjson"] != 2999 || sum.Views != 2999 || rejects != "products.ndjson:1700: not valid JSON: invalid character 'n' looking for beginning of object key string\n" {
		t.Fatalf("accepted %v, views %d, rejects %q", sum.Accepted, sum.Views, rejects)
	}
}

// A duplicate id in claims, documents or evidence is refused with the line
// that had it first: the id filter must answer "maybe" for every id it was
// given, near the start of a file or near the end. With a filter of one
// block, full after a few ids, every new id is a false "maybe" too, which
// the store must settle: the answers must not change.
func TestDuplicatesNameTheEarlierLine(t *testing.T) {
	for _, tc := range []struct {
		name        string
		filterBytes int
	}{
		{"default filter", 0},
		{"every id a maybe", 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.filterBytes > 0 {
				defer ingest.SetIDFilterBytes(tc.filterBytes)()
			}
			testDuplicates(t)
		})
	}
}

func testDuplicates(t *testing.T) {
	const src = "11111111-0000-4000-8000-000000000001"
	in := t.TempDir()
	files := map[string]string{
		"sources.ndjson":  `{"id":"` + src + `","kind":"registry","origin":"https://x","trust_tier":2,"licence_name":"CC0","may_redistribute_verbatim":true,"may_redistribute_derived":true,"covers":{"namespaces":["gtin"]}}` + "\n",
		"products.ndjson": `{"identifiers":["gtin:9520123456788"],"manufacturer":"M","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z"}` + "\n",
	}
	claim := func(id string) string {
		return `{"id":"` + id + `","subject":"gtin:09520123456788","predicate":"p` + id + `","object":{"value":1},"claim_type":"FACT","source_ref":"` + src + `","trust_level":"L2","retrieved_at":"2025-01-01T00:00:00Z"}` + "\n"
	}
	doc := func(id string) string {
		return `{"id":"` + id + `","source_id":"` + src + `","media_type":"text/html","content_hash":"sha256:0000000000000000000000000000000000000000000000000000000000000001","size":1,"retrieved_at":"2025-01-01T00:00:00Z"}` + "\n"
	}
	ev := func(id string) string {
		return `{"id":"` + id + `","claim_id":"c1","document_id":"d1","locator":{"kind":"byte_range","start":0,"end":9}}` + "\n"
	}
	var claims, docs, evs strings.Builder
	for i := 1; i <= 2000; i++ {
		claims.WriteString(claim(fmt.Sprintf("c%d", i)))
		docs.WriteString(doc(fmt.Sprintf("d%d", i)))
		evs.WriteString(ev(fmt.Sprintf("e%d", i)))
	}
	claims.WriteString(claim("c2") + claim("c1999"))
	docs.WriteString(doc("d7"))
	evs.WriteString(ev("e1") + ev("e2000"))
	files["claims.ndjson"], files["documents.ndjson"], files["evidence.ndjson"] = claims.String(), docs.String(), evs.String()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(in, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, sum, rejects, err := build(t, in, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"claims.ndjson:2001: id c2 is already used by line 2\n",
		"claims.ndjson:2002: id c1999 is already used by line 1999\n",
		"documents.ndjson:2001: id d7 is already used by line 7\n",
		"evidence.ndjson:2001: id e1 is already used by line 1\n",
		"evidence.ndjson:2002: id e2000 is already used by line 2000\n",
	}
	if rejects != strings.Join(want, "") {
		t.Errorf("rejects:\n%s\nwant:\n%s", rejects, strings.Join(want, ""))
	}
	if sum.Accepted["claims.ndjson"] != 2000 || sum.Accepted["evidence.ndjson"] != 2000 {
		t.Errorf("accepted %v", sum.Accepted)
	}
}

// The summary says how long each stage took: every input file read, in the
// order read, then views, finishing, manifest and publish.
func TestSummaryStages(t *testing.T) {
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
	_, sum, _, err := build(t, in, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range sum.Stages {
		names = append(names, st.Name)
		if st.Duration <= 0 {
			t.Errorf("stage %s took %v", st.Name, st.Duration)
		}
	}
	var want []string
	for _, f := range []string{"parties.ndjson", "sources.ndjson", "products.ndjson", "claims.ndjson", "documents.ndjson", "evidence.ndjson", "verdicts.ndjson"} {
		if name, ok := sum.Files[f]; ok {
			want = append(want, name)
		}
	}
	want = append(want, "document join", "views", "finishing", "manifest", "publish")
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("stages %v, want %v", names, want)
	}
}
