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
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/input/synthetic"
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
// differ: in place, and as the size of a bytes an rsync-like delta from the old file carries (what
// shipping the change as a delta costs). The second build makes its own
// compression dictionaries, then uses the first build's
// (DictionariesFrom). Figures to read, not rules: the test fails only if it
// cannot measure.
func TestSmallChangeBytes(t *testing.T) {
	in := generated(t, 2000)
	changed := t.TempDir()
	n := changeClaims(t, in, changed, 100)
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	first := buildSeq7(t, in, 0, epoch)
	a := files(t, first)
	for _, reuse := range []bool{false, true} {
		opts := ingest.Options{In: changed, Out: filepath.Join(t.TempDir(), "snap"), Rejects: io.Discard, Sequence: 7, SourceDateEpoch: epoch}
		what := "its own dictionaries"
		if reuse {
			opts.DictionariesFrom, what = first, "the first build's dictionaries"
		}
		if _, err := ingest.Run(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		t.Log("\n" + changeReport(a, files(t, opts.Out), fmt.Sprintf("%d claims of 1%% of 2000 products changed, the second build with %s", n, what)))
	}
}

// changeReport lists, per file of b, its size, the bytes that differ from
// a's in place, and the literal bytes of a delta from a's (deltaBytes).
func changeReport(a, b map[string][]byte, title string) string {
	names := make([]string, 0, len(b))
	for name := range b {
		names = append(names, name)
	}
	sort.Strings(names)
	var total, totalPatch, totalSize int
	var report strings.Builder
	fmt.Fprintf(&report, "%s; per file: size, bytes differing in place, bytes an rsync-like delta from the old file carries\n", title)
	for _, name := range names {
		old, now := a[name], b[name]
		inPlace := len(now) - min(len(old), len(now))
		for i := range min(len(old), len(now)) {
			if old[i] != now[i] {
				inPlace++
			}
		}
		patch := deltaBytes(old, now)
		total += inPlace
		totalPatch += patch
		totalSize += len(now)
		fmt.Fprintf(&report, "  %-45s %10d %10d %10d\n", name, len(now), inPlace, patch)
	}
	fmt.Fprintf(&report, "  %-45s %10d %10d %10d (%.1f%% of the snapshot)\n", "all", totalSize, total, totalPatch, 100*float64(totalPatch)/float64(totalSize))
	return report.String()
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

// deltaBytes is how many bytes of now an rsync-like delta from old must
// carry as they are: now is walked with a rolling hash over blocks of 64
// bytes, and a block found anywhere in old (at a multiple of 64) is sent as
// a reference, every other byte literally. It overstates a real delta
// tool: on the views table of this test's 2,000 products with the first
// build's dictionaries, zstd --long=27 --patch-from made a 28.6 KB patch
// where this counts 44.8 KB.
func deltaBytes(old, now []byte) int {
	const block = 64
	const base = 1000003
	if len(old) < block || len(now) < block {
		return len(now)
	}
	index := map[uint64][]int{}
	for at := 0; at+block <= len(old); at += block {
		h := rollInit(old[at : at+block])
		index[h] = append(index[h], at)
	}
	var pow uint64 = 1
	for range block - 1 {
		pow *= base
	}
	literal := 0
	i := 0
	h := rollInit(now[:block])
	for i+block <= len(now) {
		found := false
		for _, at := range index[h] {
			if bytes.Equal(old[at:at+block], now[i:i+block]) {
				found = true
				break
			}
		}
		if found {
			i += block
			if i+block <= len(now) {
				h = rollInit(now[i : i+block])
			}
			continue
		}
		literal++
		if i+block < len(now) {
			h = (h-uint64(now[i])*pow)*base + uint64(now[i+block])
		}
		i++
	}
	return literal + len(now) - i
}

func rollInit(b []byte) uint64 {
	var h uint64
	for _, c := range b {
		h = h*1000003 + uint64(c)
	}
	return h
}

// A build with DictionariesFrom a build of the same input is that build,
// byte for byte: the dictionaries it reads are the ones it would make. A
// folder that is no snapshot is refused, naming the option, and nothing is
// published.
func TestDictionariesFrom(t *testing.T) {
	in := generated(t, 300)
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	first := buildSeq7(t, in, 0, epoch)
	out := filepath.Join(t.TempDir(), "snap")
	opts := ingest.Options{In: in, Out: out, Rejects: io.Discard, Sequence: 7, SourceDateEpoch: epoch, DictionariesFrom: first}
	if _, err := ingest.Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	a, b := files(t, first), files(t, out)
	for name, want := range a {
		if !bytes.Equal(b[name], want) {
			t.Errorf("%s differs", name)
		}
	}
	if len(a) != len(b) {
		t.Errorf("%d files, then %d", len(a), len(b))
	}
	opts.Out, opts.DictionariesFrom = filepath.Join(t.TempDir(), "snap"), in
	if _, err := ingest.Run(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "--dictionaries-from") {
		t.Errorf("dictionaries from the input folder: %v, want a refusal naming --dictionaries-from", err)
	}
	if _, err := os.Stat(opts.Out); !os.IsNotExist(err) {
		t.Errorf("a refused build left %s: %v", opts.Out, err)
	}
}
