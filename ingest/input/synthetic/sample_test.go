package synthetic

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite sample-input from the generator")

// sampleDir is the bundled sample input: Generate with 300 products, seed 1
// and the showcase (what `make sample` writes with pds gen).
const sampleDir = "../../../sample-input"

var sampleOptions = Options{Products: 300, Seed: 1, Showcase: true}

// TestBundledSample fails when sample-input is not what the generator
// writes; go test ./synthetic -run TestBundledSample -update rewrites it.
func TestBundledSample(t *testing.T) {
	t.Parallel()
	opts := sampleOptions
	if *update {
		opts.Out = sampleDir
		if err := Generate(opts); err != nil {
			t.Fatal(err)
		}
		return
	}
	opts.Out = t.TempDir()
	if err := Generate(opts); err != nil {
		t.Fatal(err)
	}
	for _, name := range Files {
		want, err := os.ReadFile(filepath.Join(opts.Out, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(sampleDir, name))
		if err != nil {
			t.Fatalf("%v (run go test ./synthetic -run TestBundledSample -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s/%s is not what the generator writes; run go test ./synthetic -run TestBundledSample -update", sampleDir, name)
		}
	}
	entries, err := os.ReadDir(sampleDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(Files) {
		t.Errorf("%s holds %d entries, want only the %d input files", sampleDir, len(entries), len(Files))
	}
}
