package ingest

import (
	"encoding/binary"
	"testing"
)

// TestIDFilter checks that the filter never forgets a key, and that its
// false positives stay near the rate the duplicate checks are sized for
// (about 0.5% at 22 million ids in 32 MiB), here scaled down: the same bits
// per key, in a filter of 1 MiB.
func TestIDFilter(t *testing.T) {
	const filterBytes = 1 << 20
	const keys = 22_000_000 / 32 // as many keys per byte as 22 million in 32 MiB
	f := newIDFilter(filterBytes)
	key := func(i uint64) []byte {
		k := []byte("C\x00clm_")
		return binary.BigEndian.AppendUint64(k, i)
	}
	for i := range uint64(keys) {
		k := key(i)
		f.testAndAdd(k)
		if !f.test(k) {
			t.Fatalf("key %d: not seen right after it was added", i)
		}
	}
	for i := range uint64(keys) {
		if !f.test(key(i)) {
			t.Fatalf("key %d: forgotten", i)
		}
		if !f.testAndAdd(key(i)) {
			t.Fatalf("key %d: testAndAdd says new for a key added before", i)
		}
	}
	falsePos := 0
	const probes = 1_000_000
	for i := range uint64(probes) {
		if f.test(key(1<<40 + i)) {
			falsePos++
		}
	}
	rate := float64(falsePos) / probes
	t.Logf("false positives: %d of %d (%.3f%%)", falsePos, probes, 100*rate)
	if rate > 0.01 {
		t.Errorf("false positive rate %.3f%%, want under 1%%", 100*rate)
	}
	if rate == 0 {
		t.Errorf("no false positive in %d probes of a full filter: it is not filtering by its bits", probes)
	}
}

// TestIDFilterSmall checks a filter smaller than one block still works.
func TestIDFilterSmall(t *testing.T) {
	f := newIDFilter(1)
	if f.testAndAdd([]byte("a")) {
		t.Fatal("an empty filter says it has seen a key")
	}
	if !f.test([]byte("a")) {
		t.Fatal("the filter forgot a key")
	}
}
