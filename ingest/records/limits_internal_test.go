package records

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A kept store's CHECKSUMS gives each file's size in decimal, read as an
// int64: a table past 4 GiB or past 1 TiB is listed and read back exactly.
// Only the list is written; the sizes are never matched against files here.
func TestSumsSizesPast1TiB(t *testing.T) {
	sum := "blake3:" + strings.Repeat("0f", 32)
	for _, size := range []int64{1<<32 + 1, 1<<40 + 3, 1<<41 + 5, 1<<63 - 1} {
		dir := t.TempDir()
		line := fmt.Sprintf("000001.sst %d %s\n", size, sum)
		if err := os.WriteFile(filepath.Join(dir, SumsName), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readSums(dir)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if got["000001.sst"] != (fileSum{size: size, sum: sum}) {
			t.Errorf("size %d read back as %+v", size, got["000001.sst"])
		}
	}
}
