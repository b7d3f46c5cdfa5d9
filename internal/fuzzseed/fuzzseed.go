package fuzzseed

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Seed adds each seed to the fuzz target f and, when PDS_WRITE_SEEDS=1, also
// writes it to testdata/fuzz/<target>/ in Go's corpus format, so that the
// seed corpus is kept with the package.
func Seed(f *testing.F, seeds ...[]any) {
	f.Helper()
	write := os.Getenv("PDS_WRITE_SEEDS") == "1"
	dir := filepath.Join("testdata", "fuzz", f.Name())
	for i, s := range seeds {
		f.Add(s...)
		if !write {
			continue
		}
		var b strings.Builder
		b.WriteString("go test fuzz v1\n")
		for _, v := range s {
			switch x := v.(type) {
			case string:
				fmt.Fprintf(&b, "string(%s)\n", strconv.Quote(x))
			case []byte:
				fmt.Fprintf(&b, "[]byte(%s)\n", strconv.Quote(string(x)))
			case bool:
				fmt.Fprintf(&b, "bool(%t)\n", x)
			case uint8:
				fmt.Fprintf(&b, "byte(%s)\n", strconv.QuoteRune(rune(x)))
			default:
				f.Fatalf("seed type %T not supported", v)
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(b.String()), 0o644); err != nil {
			f.Fatal(err)
		}
	}
}
