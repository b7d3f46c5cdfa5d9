package ingest_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/productdata/pds/ingest/input/synthetic"
)

// Generated input compressed with zstd or gzip gives the snapshot that the
// same input plain gives.
func TestCompressedInputSameAnswers(t *testing.T) {
	gen := func(c synthetic.Compression) string {
		dir := t.TempDir()
		if err := synthetic.Generate(synthetic.Options{Products: 2000, Seed: 5, Out: dir, Showcase: true, Compress: c}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	plain, plainSum, _, err := build(t, gen(synthetic.None), false)
	if err != nil {
		t.Fatal(err)
	}
	want := dump(t, plain)
	for _, c := range []struct {
		comp synthetic.Compression
		ext  string
	}{{synthetic.Zstd, ".zst"}, {synthetic.Gzip, ".gz"}} {
		snap, sum, _, err := build(t, gen(c.comp), false)
		if err != nil {
			t.Fatalf("%s: %v", c.comp, err)
		}
		if dump(t, snap) != want {
			t.Errorf("%s input gives other answers", c.comp)
		}
		for _, name := range synthetic.Files {
			if sum.Accepted[name] != plainSum.Accepted[name] || sum.Rejected[name] != plainSum.Rejected[name] {
				t.Errorf("%s: %s: accepted %d rejected %d, plain %d and %d", c.comp, name,
					sum.Accepted[name], sum.Rejected[name], plainSum.Accepted[name], plainSum.Rejected[name])
			}
			if sum.Files[name] != name+c.ext {
				t.Errorf("%s: read %q for %s", c.comp, sum.Files[name], name)
			}
		}
	}
}

// compressedProducts is n product lines, compressed.
func compressedProducts(t *testing.T, n int, ext string) []byte {
	t.Helper()
	var plain bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&plain, `{"identifiers":["internal_sku:P-%d"],"manufacturer":"M","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z"}`+"\n", i)
	}
	var out bytes.Buffer
	switch ext {
	case ".gz":
		w := gzip.NewWriter(&out)
		w.Write(plain.Bytes())
		w.Close()
	case ".zst":
		w, err := zstd.NewWriter(&out)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(plain.Bytes())
		w.Close()
	}
	return out.Bytes()
}

// Compressed input that is cut off, corrupt or not compressed at all fails
// the build with an error naming the file (and the last line read), and two
// versions of one file are refused with both named.
func TestCompressedInputErrors(t *testing.T) {
	// 20000 lines make several zstd blocks, so a cut comes after some
	// whole ones.
	const lines = 20000
	zst := compressedProducts(t, lines, ".zst")
	gz := compressedProducts(t, lines, ".gz")
	flipped := func(b []byte) []byte {
		b = bytes.Clone(b)
		for i := len(b) / 2; i < len(b)/2+64; i++ {
			b[i] ^= 0x5a
		}
		return b
	}
	cases := []struct {
		name  string
		files map[string][]byte
		want  []string // each in the error
	}{
		{"zstd cut in the middle", map[string][]byte{"products.ndjson.zst": zst[:len(zst)/2]},
			[]string{"products.ndjson.zst: cannot read past line "}},
		{"zstd cut at the end", map[string][]byte{"products.ndjson.zst": zst[:len(zst)-3]},
			[]string{"products.ndjson.zst: cannot read past line "}},
		{"zstd corrupt", map[string][]byte{"products.ndjson.zst": flipped(zst)},
			[]string{"products.ndjson.zst: cannot read past line "}},
		{"zstd header only", map[string][]byte{"products.ndjson.zst": zst[:6]},
			[]string{"products.ndjson.zst: cannot read its first line"}},
		{"not zstd", map[string][]byte{"products.ndjson.zst": []byte(`{"identifiers":["internal_sku:P-1"]}` + "\n")},
			[]string{"products.ndjson.zst: cannot read its first line"}},
		{"gzip cut in the middle", map[string][]byte{"products.ndjson.gz": gz[:len(gz)/2]},
			[]string{"products.ndjson.gz: cannot read past line "}},
		{"gzip corrupt", map[string][]byte{"products.ndjson.gz": flipped(gz)},
			[]string{"products.ndjson.gz: cannot read past line "}},
		{"claims cut", map[string][]byte{"products.ndjson": nil, "claims.ndjson.zst": zst[:len(zst)/2]},
			[]string{"claims.ndjson.zst: cannot read past line "}},
		{"plain and zstd", map[string][]byte{"products.ndjson": nil, "products.ndjson.zst": zst},
			[]string{"products.ndjson ", "products.ndjson.zst", "keep one"}},
		{"gzip and zstd", map[string][]byte{"products.ndjson.gz": gz, "products.ndjson.zst": zst},
			[]string{"products.ndjson.gz", "products.ndjson.zst", "keep one"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := t.TempDir()
			for name, b := range c.files {
				if err := os.WriteFile(filepath.Join(in, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, _, _, err := build(t, in, false)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
