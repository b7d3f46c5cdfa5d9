package delta

import (
	"math/rand/v2"
	"testing"
)

// TestEqual counts equal bytes as a byte-by-byte loop does, whatever the
// bytes (high bits set included) and the length.
func TestEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 1000 {
		n := r.IntN(70)
		a, b := make([]byte, n), make([]byte, n)
		for i := range a {
			a[i] = byte(r.Uint32())
			b[i] = a[i]
			if r.IntN(2) == 0 {
				b[i] ^= byte(1 << r.IntN(8))
			}
		}
		want := 0
		for i := range a {
			if a[i] == b[i] {
				want++
			}
		}
		if got := equal(a, b); got != want {
			t.Fatalf("equal(%x, %x) = %d, want %d", a, b, got, want)
		}
	}
}
