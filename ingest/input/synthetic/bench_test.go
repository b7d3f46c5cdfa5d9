package synthetic

import (
	"testing"
)

// BenchmarkGenerate writes 20,000 products per iteration; products/s is the
// figure to read (go test -run '^$' -bench Generate ./synthetic/).
func BenchmarkGenerate(b *testing.B) {
	const products = 20000
	dir := b.TempDir()
	var st stats
	for b.Loop() {
		var err error
		st, err = run(Options{Products: products, Seed: 1, Out: dir})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(products)*float64(b.N)/b.Elapsed().Seconds(), "products/s")
	b.ReportMetric(float64(st.Claims)/products, "claims/product")
}
