package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/input/synthetic"
)

// benchProducts is how many generated products make about 10,000 input
// records (claims, documents, evidence and verdicts included).
const benchProducts = 400

// BenchmarkIngest10k builds a snapshot from about 10,000 records of
// `pds gen --seed 7` input, the whole build (read, validate, sort, views,
// index, manifest), and reports the allocations of one build: a change that
// adds work per record shows up as allocs/op and B/op in review, with no
// timing assertion. make bench-go runs it.
func BenchmarkIngest10k(b *testing.B) {
	in := b.TempDir()
	if err := synthetic.Generate(synthetic.Options{Products: benchProducts, Seed: 7, Out: in}); err != nil {
		b.Fatal(err)
	}
	var records int
	for _, f := range synthetic.Files {
		raw, err := os.ReadFile(filepath.Join(in, f))
		if err != nil {
			b.Fatal(err)
		}
		records += bytes.Count(raw, []byte{'\n'})
	}
	out := b.TempDir()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		snap := filepath.Join(out, fmt.Sprintf("snap-%d", i))
		sum, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: snap})
		if err != nil {
			b.Fatal(err)
		}
		if sum.Accepted[ingest.FileProducts] != benchProducts {
			b.Fatalf("accepted %v", sum.Accepted)
		}
		b.StopTimer()
		os.RemoveAll(snap)
		b.StartTimer()
	}
	b.ReportMetric(float64(records), "records/op")
}
