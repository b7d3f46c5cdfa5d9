package index

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A served index (OpenWith) reads its segments and its doc store's entries
// from private copies, in memory or in a folder (CopyDir): each copy is
// given to CheckCopy before it is read, with the file's bytes, and once open
// the index answers the same with every such file cut to nothing. A failed
// check fails the open.
func TestServedSegmentsAreCheckedPrivateCopies(t *testing.T) {
	for _, place := range []string{"memory", "folder"} {
		t.Run(place, func(t *testing.T) {
			copyDir := ""
			if place == "folder" {
				copyDir = t.TempDir()
			}
			servedFromPrivateCopies(t, copyDir)
		})
	}
}

func servedFromPrivateCopies(t *testing.T, copyDir string) {
	base, dir := filepath.Join(t.TempDir(), "base"), filepath.Join(t.TempDir(), "ix")
	docs := modelDocs(300, 3)
	writeTestIndex(t, base, docs[:250], 4, batchSize)
	writeUpdated(t, dir, base, docs, 4)
	segments := segmentFiles(t, dir)
	if len(segments) != 2 {
		t.Fatalf("%d segments, want two: the base's and the night's", len(segments))
	}
	queries := []Query{{TrustLevelMin: -1}, {Manufacturer: "acme", TrustLevelMin: -1}, {Manufacturer: "nordic fish", TrustLevelMin: -1}}
	plain, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want [][]Hit
	for _, q := range queries {
		want = append(want, walk(t, plain, q, 7))
	}
	plain.Close()

	checked := map[string]bool{}
	ix, err := OpenWith(dir, OpenOptions{CheckCopy: func(path string, copy io.Reader) error {
		got, err := io.ReadAll(copy)
		if err != nil {
			return err
		}
		file, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, file) {
			t.Errorf("the copy of %s is not its bytes", path)
		}
		checked[path] = true
		return nil
	}, CopyDir: copyDir})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if copyDir != "" && runtime.GOOS != "windows" {
		if names, err := os.ReadDir(copyDir); err != nil || len(names) != 0 {
			t.Errorf("the copy folder holds %d names (%v): a copy's name is removed at once", len(names), err)
		}
		if runtime.GOOS == "linux" {
			if n := openFilesIn(t, copyDir); n != len(segments) {
				t.Errorf("%d files open in the copy folder, want one a segment (%d)", n, len(segments))
			}
		}
	}
	for _, p := range append(segments, filepath.Join(dir, docsIdxFile)) {
		if !checked[p] {
			t.Errorf("%s was not checked", p)
		}
		if err := os.Truncate(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i, q := range queries {
		sameHits(t, q.Manufacturer, walk(t, ix, q, 7), want[i])
	}

	refused := errors.New("refused")
	_, err = OpenWith(dir, OpenOptions{CheckCopy: func(string, io.Reader) error { return refused }})
	if !errors.Is(err, refused) {
		t.Fatalf("open with a check that refuses: %v", err)
	}
}

// openFilesIn counts the files this process holds open in dir (Linux).
func openFilesIn(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			n++
		}
	}
	return n
}
