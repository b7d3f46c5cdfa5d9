package index

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the expected results in testdata/relevance/*.txt")

// buildTestIndex writes docs into a new index under t.TempDir and opens it.
func buildTestIndex(t testing.TB, docs []Doc, blockSize int) *Index {
	t.Helper()
	return buildTestIndexBatches(t, docs, blockSize, batchSize)
}

// buildTestIndexBatches is buildTestIndex with a Bleve segment every segmentDocs docs.
func buildTestIndexBatches(t testing.TB, docs []Doc, blockSize, segmentDocs int) *Index {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "index")
	writeTestIndex(t, dir, docs, blockSize, segmentDocs)
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// writeTestIndex builds an index of docs in dir (which must not exist) and closes it.
func writeTestIndex(t testing.TB, dir string, docs []Doc, blockSize, segmentDocs int) {
	t.Helper()
	b, err := create(dir, blockSize, segmentDocs)
	if err != nil {
		t.Fatal(err)
	}
	addAll(t, b, docs)
}

// addAll adds docs to b and closes it.
func addAll(t testing.TB, b *Builder, docs []Doc) {
	t.Helper()
	for _, d := range docs {
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// A relevance file lists manufacturer names, one per line, then queries, one per line, as
//
//	query → Expected One | Expected Two
//
// with the manufacturers a search for query must return, best first (nothing after the arrow:
// it must return none). Lines starting with '#' and blank lines are comments. Each name becomes
// one public product. `go test ./index -run TestRelevance -update` rewrites the expectations.
const arrow = "→"

func TestRelevance(t *testing.T) {
	files, err := filepath.Glob("testdata/relevance/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no relevance files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			runRelevanceFile(t, file)
		})
	}
}

func runRelevanceFile(t *testing.T, file string) {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	var docs []Doc
	updated := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.Contains(l, arrow) {
			continue
		}
		docs = append(docs, Doc{
			Subject:      fmt.Sprintf("gtin:%014d", len(docs)+1),
			Manufacturer: l,
			TrustLevel:   3,
			UpdatedAt:    updated,
		})
	}
	ix := buildTestIndex(t, docs, defaultBlockSize)
	changed := false
	for i, l := range lines {
		q, want, ok := strings.Cut(l, arrow)
		if !ok || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		q, want = strings.TrimSpace(q), strings.TrimSpace(want)
		page, err := ix.Search(context.Background(), Query{Manufacturer: q, TrustLevelMin: -1, Sort: SortRelevance, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range page.Hits {
			got = append(got, h.Manufacturer)
		}
		gotS := strings.Join(got, " | ")
		if gotS == want {
			continue
		}
		if *update {
			lines[i] = strings.TrimRight(q+" "+arrow+" "+gotS, " ")
			changed = true
			continue
		}
		t.Errorf("%s:%d: %q\n got: %s\nwant: %s", file, i+1, q, gotS, want)
	}
	if changed {
		if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
