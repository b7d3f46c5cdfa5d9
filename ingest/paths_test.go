package ingest_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest"
)

// TestOutInsideWhatTheBuildReadsIsRefused: an --out inside the base, inside
// the base's kept records (directly or through a symbolic link), or inside
// the snapshot of --dictionaries-from is refused before anything is
// written, and the folder read is left as it was.
func TestOutInsideWhatTheBuildReadsIsRefused(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: "../sample-input", Out: base, Rejects: io.Discard, KeepRecords: true, Sequence: 1}); err != nil {
		t.Fatal(err)
	}
	records := base + ".records"
	if err := os.Symlink(records, filepath.Join(dir, "records-link")); err != nil {
		t.Fatal(err)
	}
	changes := filepath.Join(dir, "changes")
	if err := os.Mkdir(changes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(changes, ingest.FileProducts), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	before := listing(t, dir)
	for _, c := range []struct {
		name string
		opts ingest.Options
		want string
	}{
		{"in the base's records", ingest.Options{Base: base, Out: filepath.Join(records, "next")}, "is inside " + records + " (the records of --base)"},
		{"in the base's records, through a link", ingest.Options{Base: base, Out: filepath.Join(dir, "records-link", "next")}, "is inside " + records + " (the records of --base)"},
		{"in the base", ingest.Options{Base: base, Out: filepath.Join(base, "next")}, "is inside " + base + " (--base)"},
		{"in the dictionaries' snapshot", ingest.Options{DictionariesFrom: base, Out: filepath.Join(base, "x", "next")}, "is inside " + base + " (--dictionaries-from)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.In, c.opts.Rejects, c.opts.Sequence = changes, io.Discard, 2
			_, err := ingest.Run(context.Background(), c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "which the build reads") {
				t.Fatalf("--out %s: %v, want an error saying it %s", c.opts.Out, err, c.want)
			}
			if after := listing(t, dir); after != before {
				t.Errorf("the refused build changed what is on disk:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// listing names every file and folder under dir.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		names = append(names, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(names, "\n")
}
