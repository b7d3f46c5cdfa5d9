package ingest_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/synthetic"
)

// generated writes pds gen's input of n products, seed 1.
func generated(t *testing.T, n int) string {
	t.Helper()
	in := t.TempDir()
	if err := synthetic.Generate(synthetic.Options{Products: n, Seed: 1, Out: in}); err != nil {
		t.Fatal(err)
	}
	return in
}

// buildSeq7 ingests in into a new snapshot with sequence 7, on procs cores (0:
// as many as the machine has), at the given SOURCE_DATE_EPOCH (zero: none).
func buildSeq7(t *testing.T, in string, procs int, epoch time.Time) string {
	t.Helper()
	if procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	}
	out := filepath.Join(t.TempDir(), "snap")
	_, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: out, Rejects: io.Discard, Sequence: 7, SourceDateEpoch: epoch})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// files returns the contents of every file under dir, by slash-separated
// path.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withoutBuild returns a manifest with its build id and creation time
// blanked, the two members two builds of one input may differ in.
func withoutBuild(t *testing.T, manifest []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	m["build_id"], m["created_at"] = "", ""
	b, _ := json.Marshal(m)
	return b
}

// Two builds of the same input with the same sequence are the same bytes,
// every file (the store's tables, MANIFEST and OPTIONS, the point index, the
// search index's segment and root.bolt, the chunk list, the manifest), whether the build runs on one core
// or on all of them. Only the manifest's build id and creation time differ;
// with SOURCE_DATE_EPOCH set, they do not either.
func TestSameInputSameBytes(t *testing.T) {
	in := generated(t, 2000)
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var (
		plain   = buildSeq7(t, in, 0, time.Time{})
		oneCore = buildSeq7(t, in, 1, epoch)
		allCore = buildSeq7(t, in, 0, epoch)
	)
	a, b, c := files(t, plain), files(t, oneCore), files(t, allCore)
	if len(c) < 15 {
		t.Fatalf("only %d files: %v", len(c), c)
	}
	for _, name := range []string{"manifest.json", "chunks", "points/identity", "index/products.bleve/store/root.bolt"} {
		if c[name] == nil {
			t.Fatalf("no %s among the files compared", name)
		}
	}
	for _, dirs := range []struct {
		what string
		x, y map[string][]byte
	}{{"one core and all cores, SOURCE_DATE_EPOCH set", b, c}, {"without SOURCE_DATE_EPOCH and with it", a, c}} {
		for name, want := range dirs.y {
			got, ok := dirs.x[name]
			if name == "manifest.json" && dirs.what[0] == 'w' {
				got, want = withoutBuild(t, got), withoutBuild(t, want)
			}
			if !ok || sha256.Sum256(got) != sha256.Sum256(want) {
				t.Errorf("%s: %s differs", dirs.what, name)
			}
		}
		if len(dirs.x) != len(dirs.y) {
			t.Errorf("%s: %d files, then %d", dirs.what, len(dirs.x), len(dirs.y))
		}
	}
	if bytes.Equal(a["manifest.json"], c["manifest.json"]) {
		t.Error("the manifest without SOURCE_DATE_EPOCH has the build id and time of the one with it")
	}
}

// TestSmallChangeBytes changes the claims of 1% of the products (their
// values) and reports, for each file of the two snapshots, how many bytes
// differ: in place, and as the size of a zstd patch from the old file (what
// shipping the change as a delta costs). A figure to read, not a rule: the
// test fails only if it cannot measure.
func TestSmallChangeBytes(t *testing.T) {
	in := generated(t, 2000)
	changed := t.TempDir()
	n := changeClaims(t, in, changed, 100)
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := files(t, buildSeq7(t, in, 0, epoch)), files(t, buildSeq7(t, changed, 0, epoch))
	names := make([]string, 0, len(b))
	for name := range b {
		names = append(names, name)
	}
	sort.Strings(names)
	var total, totalPatch, totalSize int
	var report strings.Builder
	fmt.Fprintf(&report, "%d claims changed; per file: size, bytes differing in place, zstd patch from the old file\n", n)
	for _, name := range names {
		old, now := a[name], b[name]
		inPlace := len(now) - min(len(old), len(now))
		for i := range min(len(old), len(now)) {
			if old[i] != now[i] {
				inPlace++
			}
		}
		patch := patchSize(t, old, now)
		total += inPlace
		totalPatch += patch
		totalSize += len(now)
		fmt.Fprintf(&report, "  %-45s %10d %10d %10d\n", name, len(now), inPlace, patch)
	}
	fmt.Fprintf(&report, "  %-45s %10d %10d %10d (%.1f%% of the snapshot)\n", "all", totalSize, total, totalPatch, 100*float64(totalPatch)/float64(totalSize))
	t.Log("\n" + report.String())
}

// changeClaims copies the input in to out, changing the value of every claim
// of one product in every (by the hash of its subject), and returns how
// many claims it changed.
func changeClaims(t *testing.T, in, out string, every uint64) int {
	t.Helper()
	entries, err := os.ReadDir(in)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(in, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "claims.ndjson" {
			var w bytes.Buffer
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				line := sc.Bytes()
				var c map[string]any
				if err := json.Unmarshal(line, &c); err == nil && xxhash.Sum64String(fmt.Sprint(c["subject"]))%every == 0 {
					if obj, ok := c["object"].(map[string]any); ok {
						switch v := obj["value"].(type) {
						case string:
							obj["value"] = v + " (new)"
						case float64:
							obj["value"] = v + 1
						case bool:
							obj["value"] = !v
						}
						line, _ = json.Marshal(c)
						n++
					}
				}
				w.Write(line)
				w.WriteByte('\n')
			}
			b = w.Bytes()
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Fatal("no claim changed")
	}
	return n
}

// patchSize is the size of now compressed by zstd with old as its
// dictionary (as zstd --patch-from does).
func patchSize(t *testing.T, old, now []byte) int {
	t.Helper()
	if len(old) < 8 {
		return len(now)
	}
	window := 1 << bits.Len(uint(len(old)+len(now)))
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderDictRaw(1, old), zstd.WithWindowSize(max(window, zstd.MinWindowSize)), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return len(enc.EncodeAll(now, nil))
}
