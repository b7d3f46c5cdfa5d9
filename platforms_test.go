package pds_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pds builds for 64-bit platforms only: an int holds any file offset and
// size its formats give (u64 in the point index, int64 in manifests), and
// the point index, the delta encoder and Bleve map whole files of more
// than 2 GiB. The Makefile's CROSS list is what make cross builds; a 32-bit
// entry there would need the formats' readers checked for int overflow
// first.
func TestPlatformsAre64Bit(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Fatalf("int is %d bits here; pds supports 64-bit platforms only", strconv.IntSize)
	}
	b, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CROSS := (.+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the Makefile has no CROSS list")
	}
	wide := map[string]bool{"amd64": true, "arm64": true, "ppc64le": true, "riscv64": true, "s390x": true, "loong64": true}
	for _, p := range strings.Fields(string(m[1])) {
		_, arch, _ := strings.Cut(p, "/")
		if !wide[arch] {
			t.Errorf("the Makefile's CROSS builds %s, not a 64-bit platform", p)
		}
	}
}
