package delta_test

import (
	"bytes"
	"testing"

	"github.com/productdata/pds/snapshots/delta"
)

// FuzzRoundTrip: whatever the base and target, the delta rebuilds the target.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef-and-more"), []byte("xx0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"))
	f.Add([]byte{}, []byte("x"))
	f.Fuzz(func(t *testing.T, base, tgt []byte) {
		var d bytes.Buffer
		if _, err := delta.Encode(&d, base, tgt); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := delta.Apply(&out, &d, bytes.NewReader(base), int64(len(base)), int64(len(tgt))); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), tgt) {
			t.Fatal("rebuilt target differs")
		}
	})
}

// FuzzApply: any bytes as a delta end in a target or an error, never a
// panic, and never more than the limit written.
func FuzzApply(f *testing.F) {
	f.Add([]byte(delta.Magic+"c\x00\x04l\x02hie\x06"), []byte("base"), int64(10))
	f.Add([]byte(delta.Magic+"e\x00"), []byte(""), int64(0))
	f.Fuzz(func(t *testing.T, d, base []byte, limit int64) {
		if limit < 0 {
			limit = -limit
		}
		limit %= 1 << 20
		var out bytes.Buffer
		n, _ := delta.Apply(&out, bytes.NewReader(d), bytes.NewReader(base), int64(len(base)), limit)
		if n > limit || int64(out.Len()) != n {
			t.Fatalf("wrote %d (reported %d) with a limit of %d", out.Len(), n, limit)
		}
	})
}
