package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTermsMatchSprintf holds the time terms to fmt's "%016x" and "%c%016x", the format the
// indexes on disk hold: an index built by an earlier pds keeps answering time filters the same.
func TestTermsMatchSprintf(t *testing.T) {
	keys := []uint64{0, 1, 0xf, 0x10, 1 << 63, math.MaxUint64, math.MaxUint64 - 1, 0x0123456789abcdef}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		keys = append(keys, r.Uint64())
	}
	for _, k := range keys {
		if got, want := exactTerm(k), fmt.Sprintf("%016x", k); got != want {
			t.Errorf("exactTerm(%#x) = %q, want %q", k, got, want)
		}
		var want []string
		for lvl := 1; lvl < len(levelShifts); lvl++ {
			want = append(want, fmt.Sprintf("%c%016x", 'a'+lvl-1, k>>levelShifts[lvl]))
			if got := levelTerm(lvl, k>>levelShifts[lvl]); got != want[lvl-1] {
				t.Errorf("levelTerm(%d, %#x) = %q, want %q", lvl, k>>levelShifts[lvl], got, want[lvl-1])
			}
		}
		if got := levelTerms(k); !slices.Equal(got, want) {
			t.Errorf("levelTerms(%#x) = %q, want %q", k, got, want)
		}
	}
}
