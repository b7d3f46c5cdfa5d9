package synthetic

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// decompress reads a whole compressed file, all its frames.
func decompress(t *testing.T, path string, c Compression) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader
	switch c {
	case Gzip:
		gz, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		r = gz
	case Zstd:
		zr, err := zstd.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	default:
		r = f
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// Compressed files hold, once decompressed, the bytes of the plain ones, and
// their own bytes do not depend on the number of workers either.
func TestCompressDeterminism(t *testing.T) {
	gen := func(c Compression, procs int) string {
		dir := t.TempDir()
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		if err := Generate(Options{Products: 2100, Seed: 7, Out: dir, Showcase: true, Compress: c}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	plain := readDir(t, gen(None, 2))
	for _, c := range []Compression{Gzip, Zstd} {
		a, b := gen(c, 2), gen(c, 1)
		for _, name := range Files {
			file := name + c.ext()
			if got := decompress(t, filepath.Join(a, file), c); !bytes.Equal(got, plain[name]) {
				t.Errorf("%s: %d bytes once decompressed, not the %d of %s", file, len(got), len(plain[name]), name)
			}
			ab, _ := os.ReadFile(filepath.Join(a, file))
			bb, _ := os.ReadFile(filepath.Join(b, file))
			if !bytes.Equal(ab, bb) {
				t.Errorf("%s: other bytes with one worker", file)
			}
			if len(ab) >= len(plain[name]) && len(plain[name]) > 10000 {
				t.Errorf("%s: %d bytes, plain %d", file, len(ab), len(plain[name]))
			}
		}
	}
}

// Writing one kind of file removes the other kinds of the same file, so that
// a directory never holds two versions of it; other files stay.
func TestCompressReplacesTwins(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"products.ndjson", "claims.ndjson.gz", "verdicts.ndjson.zst", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := func() []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	for _, c := range []Compression{Zstd, Gzip, None} {
		if err := Generate(Options{Products: 5, Seed: 1, Out: dir, Compress: c}); err != nil {
			t.Fatal(err)
		}
		want := []string{"notes.txt"}
		for _, name := range Files {
			want = append(want, name+c.ext())
		}
		slices.Sort(want)
		if got := list(); !slices.Equal(got, want) {
			t.Errorf("after %q: %v, want %v", c, got, want)
		}
	}
}

func TestCompressOptions(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Compression{"": None, "none": None, "gzip": Gzip, "zstd": Zstd} {
		if got, err := ParseCompression(in); err != nil || got != want {
			t.Errorf("ParseCompression(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseCompression("xz"); err == nil || !strings.Contains(err.Error(), `"xz"`) {
		t.Errorf("ParseCompression(xz): %v", err)
	}
	dir := t.TempDir()
	err := Generate(Options{Products: 5, Out: dir, Compress: "xz"})
	if err == nil || !strings.Contains(err.Error(), `"xz"`) {
		t.Errorf("Generate with xz: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %d files", len(entries))
	}
}
