package kv

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// A mapped point index keeps the kernel's read-ahead until it is advised
// otherwise; then its records and entries are advised as read at random
// (VmFlags "rr" in /proc/self/smaps), so that a page fault there reads one
// page and not the disk's read-ahead window, and its header, dictionary and
// radix are not.
func TestMappedPointsRecordsAreAdvisedRandom(t *testing.T) {
	path, _, _ := identityPoints(t, 40000)
	p, err := openPoints(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	page := uint64(os.Getpagesize())
	if p.radixAt()-p.dataAt < 4*page {
		t.Fatalf("the index's records and entries span %d bytes: too few pages to tell", p.radixAt()-p.dataAt)
	}
	base := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(p.mapped))))
	for _, r := range smapsFlags(t, base, base+uint64(len(p.mapped))) {
		if strings.Contains(" "+r.flags+" ", " rr ") {
			t.Fatalf("advised random before adviseRandom: VmFlags %q", r.flags)
		}
	}
	p.adviseRandom()
	flags := smapsFlags(t, base, base+uint64(len(p.mapped)))
	at := func(off uint64) string {
		for _, r := range flags {
			if base+off >= r.from && base+off < r.to {
				return r.flags
			}
		}
		t.Fatalf("offset %d of the index is in no mapping of /proc/self/smaps", off)
		return ""
	}
	for _, c := range []struct {
		what   string
		off    uint64
		random bool
	}{
		{"the header", 0, false},
		{"the middle of the records", (p.dataAt + p.entriesAt) / 2 / page * page, true},
		{"the entries", (p.entriesAt + p.radixAt()) / 2 / page * page, true},
		{"the radix", uint64(len(p.mapped)) - 1, false},
	} {
		if got := strings.Contains(" "+at(c.off)+" ", " rr "); got != c.random {
			t.Errorf("%s (offset %d): VmFlags %q, advised random: %v, want %v", c.what, c.off, at(c.off), got, c.random)
		}
	}
}

type smapsRange struct {
	from, to uint64
	flags    string
}

// smapsFlags returns the VmFlags of every mapping of this process that
// overlaps [from, to).
func smapsFlags(t *testing.T, from, to uint64) []smapsRange {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []smapsRange
	var cur *smapsRange
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := strings.Cut(strings.Fields(line)[0], "-"); ok && !strings.HasSuffix(strings.Fields(line)[0], ":") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			cur = nil
			if err1 == nil && err2 == nil && a < to && b > from {
				out = append(out, smapsRange{from: a, to: b})
				cur = &out[len(out)-1]
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "VmFlags:"); ok && cur != nil {
			cur.flags = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
