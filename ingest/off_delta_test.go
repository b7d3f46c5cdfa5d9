package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/input/openfoodfacts"
)

// TestOpenFoodFactsDeltaEqualsFull: an Open Food Facts delta file (the
// dump's lines of the products changed or added since) imported by pds
// import off is a change set, and the incremental build from it answers as
// a full build of the dump with those lines in place does.
func TestOpenFoodFactsDeltaEqualsFull(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump.jsonl")
	if _, err := openfoodfacts.Generate(openfoodfacts.GenOptions{Records: 400, Seed: 3, Out: dump}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	var delta, merged [][]byte
	seen := map[string]bool{}
	for i, line := range lines {
		var rec map[string]any
		code := ""
		if json.Unmarshal(line, &rec) == nil {
			code, _ = rec["code"].(string)
		}
		first := code != "" && !seen[code]
		seen[code] = true
		if first && i%9 == 0 {
			rec["product_name"] = fmt.Sprintf("Renamed %d", i)
			rec["brands"] = "Brand changed"
			line, _ = json.Marshal(rec)
			delta = append(delta, line)
		}
		merged = append(merged, line)
	}
	for k := range 5 {
		line := []byte(fmt.Sprintf(`{"code":"pds-new-%d","product_name":"New product %d","brands":"New","last_modified_t":1764000000,"created_t":1764000000}`, k, k))
		delta = append(delta, line)
		merged = append(merged, line)
	}
	write := func(name string, ls [][]byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, append(bytes.Join(ls, []byte("\n")), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	at := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	imp := func(in, out string) {
		t.Helper()
		if _, err := openfoodfacts.Import(openfoodfacts.Options{In: in, Out: out, RetrievedAt: at, NoDocuments: true, Rejects: io.Discard}); err != nil {
			t.Fatal(err)
		}
	}
	imp(dump, filepath.Join(dir, "in-0"))
	imp(write("delta.jsonl", delta), filepath.Join(dir, "changes"))
	imp(write("merged.jsonl", merged), filepath.Join(dir, "in-1"))
	run := func(o ingest.Options) ingest.Summary {
		t.Helper()
		o.Rejects = io.Discard
		sum, err := ingest.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	run(ingest.Options{In: filepath.Join(dir, "in-0"), Out: filepath.Join(dir, "base"), KeepRecords: true, Sequence: 1})
	sum := run(ingest.Options{In: filepath.Join(dir, "changes"), Out: filepath.Join(dir, "next"), Base: filepath.Join(dir, "base"), Sequence: 2})
	run(ingest.Options{In: filepath.Join(dir, "in-1"), Out: filepath.Join(dir, "full"), Sequence: 2})
	t.Logf("%d delta lines: %+v", len(delta), *sum.Incremental)
	if sum.Incremental.Added != 5 || sum.Incremental.Changed == 0 {
		t.Errorf("the delta's products: %+v", *sum.Incremental)
	}
	sameAnswers(t, filepath.Join(dir, "next"), filepath.Join(dir, "full"))
}
