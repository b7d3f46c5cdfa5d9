package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
)

// pds export writes the file whole or not at all: a finished export leaves
// the file readable by others and nothing else beside it, says what it
// wrote and whom the rows must credit; a snapshot it cannot open leaves an
// earlier file as it was; a missing flag is a usage error.
func TestExportWritesTheFileWholeOrNotAtAll(t *testing.T) {
	snap := ingesttest.Build(t, filepath.Join(ingesttest.Root(), "sample-input"))
	dir := t.TempDir()
	out := filepath.Join(dir, "products.parquet")

	code, stdout, stderr := runCmd("export", "--snapshot", snap, "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"exported 304 products of snapshot ", "withheld from 20 (its licence permits no redistribution)",
		`attribution: "Contains data from the Nordic Retail Data Pool."`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stdout)
		}
	}
	info, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm()&0o044 != 0o044 {
		t.Errorf("the file's mode is %v; others may not read it", info.Mode())
	}
	head := make([]byte, 4)
	f, _ := os.Open(out)
	f.Read(head)
	f.Close()
	if string(head) != "PAR1" {
		t.Errorf("the file starts with %q, not Parquet's PAR1", head)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d files after the export, want the file alone", len(entries))
	}

	before, _ := os.ReadFile(out)
	code, _, stderr = runCmd("export", "--snapshot", filepath.Join(dir, "no-such-snapshot"), "--out", out)
	if code != 1 || !strings.Contains(stderr, "no-such-snapshot") {
		t.Errorf("export of a missing snapshot: exit %d, stderr %q; want 1 naming it", code, stderr)
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) {
		t.Errorf("a failed export changed the earlier file")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed export left %d files in the folder", len(entries))
	}

	if code, _, _ := runCmd("export", "--snapshot", snap); code != 2 {
		t.Errorf("export without --out: exit %d, want 2", code)
	}
}
