package http_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/snapshots"
)

// tree lists every file under dir with its size and checksum.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, fmt.Sprintf("%s %d %x", rel, len(b), sha256.Sum256(b)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// A read never writes: after a storm of reads, mostly of absent
// identifiers, every file of the snapshot is byte-identical and no file was
// added or removed.
func TestReadsNeverWrite(t *testing.T) {
	e := newEnv(t)
	before := tree(t, e.snap)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 250; i++ {
				id := fmt.Sprintf("internal_sku:ABSENT-%d-%d", w, i)
				for _, p := range []string{"/v1/products/" + id, "/v1/products/" + id + "/dpp", "/v1/products/" + id + "/evidence"} {
					r := e.do(t, "GET", p, ingesttest.KeyFull, "")
					if r.status != 200 || r.json["status"] == "found" {
						t.Errorf("%s: %d %v", p, r.status, r.json["status"])
						return
					}
				}
			}
			e.do(t, "GET", "/v1/products/"+demo+"/dpp", ingesttest.KeyFull, "")
		}(w)
	}
	wg.Wait()
	if after := tree(t, e.snap); after != before {
		t.Fatalf("snapshot changed under reads:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, err := snapshots.Verify(e.snap); err != nil {
		t.Fatal(err)
	}
}
