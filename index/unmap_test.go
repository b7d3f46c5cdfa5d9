package index

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestUpdateOutlivesItsMappedFiles updates a base again and again with one doc dropped: the
// deletion bitmaps are written after the base's segment and root.bolt are closed, so they must
// not point into either's mapped file (a crash, or garbage, when they did).
func TestUpdateOutlivesItsMappedFiles(t *testing.T) {
	tmp := t.TempDir()
	docs := modelDocs(100, 5)
	base := filepath.Join(tmp, "base")
	writeTestIndex(t, base, docs, 4, batchSize)
	prev := base
	for i := range 12 {
		dir := filepath.Join(tmp, fmt.Sprint(i))
		docs = append(docs[:i], docs[i+1:]...)
		writeUpdated(t, dir, prev, docs, 4)
		prev = dir
	}
	ix, err := Open(prev)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, q := range []Query{{TrustLevelMin: -1}, {Manufacturer: "acme", TrustLevelMin: -1}} {
		want := filepath.Join(tmp, fmt.Sprint("whole-", q.Manufacturer))
		writeTestIndex(t, want, docs, 4, batchSize)
		w, err := Open(want)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, fmt.Sprintf("%+v", q), walk(t, ix, q, 100), walk(t, w, q, 100))
		w.Close()
	}
}
