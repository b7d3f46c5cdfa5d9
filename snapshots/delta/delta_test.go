package delta_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/productdata/pds/snapshots/delta"
)

// randomBytes are n bytes that do not repeat: every block is unique, as in
// a table of compressed values.
func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// offsets is data followed by a table of offsets into it, each moved by
// shift, in a random order: the shape of the point index.
func offsets(data []byte, shift int) []byte {
	out := bytes.Clone(data)
	r := rand.New(rand.NewPCG(5, 6))
	for range 4000 {
		out = binary.LittleEndian.AppendUint64(out, r.Uint64())
		out = binary.LittleEndian.AppendUint64(out, uint64(r.IntN(len(data))+shift))
	}
	return out
}

// TestRoundTrip rebuilds targets of every kind of change from their delta,
// and holds the delta of a small change small.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := randomBytes(r, 200_000)
	changed := bytes.Clone(base)
	for _, at := range []int{5_000, 70_001, 150_003} {
		copy(changed[at:], "a changed value")
	}
	tests := []struct {
		name       string
		base, tgt  []byte
		maxLiteral int64 // the delta's literal bytes may not exceed it
	}{
		{"both empty", nil, nil, 0},
		{"empty base", nil, base[:1000], 1000},
		{"empty target", base, nil, 0},
		{"shorter than a block", base[:10], base[:10], 10},
		{"the same", base, base, 0},
		{"values changed in place", base, changed, 3 * 15},
		{"bytes inserted at the start", base, cat([]byte("new bytes"), base), 9},
		{"bytes inserted in the middle", base, cat(base[:100_000], []byte("inserted"), base[100_000:]), 8},
		{"bytes removed", base, cat(base[:50_000], base[50_100:]), 0},
		{"appended", base, cat(base, []byte("at the end")), 10},
		{"moved around", base, cat(base[100_000:], base[:100_000]), 0},
		{"all new", base, randomBytes(r, 5_000), 5_000},
		{"a table of offsets after a value that grew", offsets(base, 0), cat([]byte("grown"), offsets(base, 5)), 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d bytes.Buffer
			st, err := delta.Encode(&d, tt.base, tt.tgt)
			if err != nil {
				t.Fatal(err)
			}
			if st.Copied+st.Literal+st.Added != int64(len(tt.tgt)) {
				t.Errorf("copied %d + literal %d + added %d != target %d", st.Copied, st.Literal, st.Added, len(tt.tgt))
			}
			if st.Literal > tt.maxLiteral {
				t.Errorf("%d literal bytes, want at most %d", st.Literal, tt.maxLiteral)
			}
			var out bytes.Buffer
			n, err := delta.Apply(&out, bytes.NewReader(d.Bytes()), bytes.NewReader(tt.base), int64(len(tt.base)), int64(len(tt.tgt)))
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(len(tt.tgt)) || !bytes.Equal(out.Bytes(), tt.tgt) {
				t.Errorf("rebuilt %d bytes that differ from the %d-byte target", n, len(tt.tgt))
			}
		})
	}
}

// TestApplyRefusesDamage: a delta cut anywhere, a copy outside the base, a
// target longer than the limit, bytes after the end and a wrong base size
// are each refused with ErrCorrupt.
func TestApplyRefusesDamage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	base := randomBytes(r, 10_000)
	tgt := cat(base[:4000], []byte("changed"), base[4000:])
	var d bytes.Buffer
	if _, err := delta.Encode(&d, base, tgt); err != nil {
		t.Fatal(err)
	}
	good := d.Bytes()
	apply := func(delta_ []byte, baseSize, limit int64) error {
		var out bytes.Buffer
		_, err := delta.Apply(&out, bytes.NewReader(delta_), bytes.NewReader(base[:baseSize]), baseSize, limit)
		return err
	}
	for cut := 0; cut < len(good); cut++ {
		if err := apply(good[:cut], int64(len(base)), int64(len(tgt))); !errors.Is(err, delta.ErrCorrupt) {
			t.Fatalf("cut at %d of %d: %v, want ErrCorrupt", cut, len(good), err)
		}
	}
	cases := []struct {
		name            string
		d               []byte
		baseSize, limit int64
	}{
		{"bytes after the end", cat(good, []byte{0}), int64(len(base)), int64(len(tgt))},
		{"a shorter base", good, 5000, int64(len(tgt))},
		{"a lower limit", good, int64(len(base)), int64(len(tgt)) - 1},
		{"a copy before the base", []byte(delta.Magic + "c\x01\x05"), int64(len(base)), 100},
		{"an unknown operation", []byte(delta.Magic + "x"), int64(len(base)), 100},
		{"a wrong magic", append([]byte("PDSDLT99"), good[8:]...), int64(len(base)), int64(len(tgt))},
		{"an add outside the base", []byte(delta.Magic + "a\x00\xa0\x9c\x01" + strings.Repeat("\x00", 64)), int64(len(base)), 100},
		{"an add cut short", []byte(delta.Magic + "a\x00\x40\x00"), int64(len(base)), 100},
		{"an add before the base", []byte(delta.Magic + "a\x01\x04abcd"), int64(len(base)), 100},
		{"an add in a delta of the first version", []byte("PDSDLT01a\x00\x01\x00e\x01"), int64(len(base)), 100},
		{"a wrong end size", []byte(delta.Magic + "l\x01ae\x02"), int64(len(base)), 100},
	}
	for _, c := range cases {
		if err := apply(c.d, c.baseSize, c.limit); !errors.Is(err, delta.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", c.name, err)
		}
	}
	if err := apply(good, int64(len(base)), int64(len(tgt))); err != nil {
		t.Fatalf("the good delta: %v", err)
	}
	// A delta of the first version (no add operations) still applies.
	var out bytes.Buffer
	if _, err := delta.Apply(&out, strings.NewReader("PDSDLT01c\x00\x04e\x04"), strings.NewReader("base"), 4, 4); err != nil || out.String() != "base" {
		t.Errorf("a delta of the first version: %q, %v", out.String(), err)
	}
}

// entries is a table of 28-byte entries, one for each length of lengths
// but those removed lists, as the doc store's table is: the offset of its
// record in the data before it (uint64), a random key (uint64), a small
// number (uint32) and a rising position (uint64).
func entries(lengths []int, removed map[int]bool) []byte {
	r := rand.New(rand.NewPCG(7, 8))
	var out []byte
	off := uint64(0)
	for i, n := range lengths {
		key, small := r.Uint64(), r.Uint32()%16
		if removed[i] {
			continue
		}
		out = binary.LittleEndian.AppendUint64(out, off)
		out = binary.LittleEndian.AppendUint64(out, key)
		out = binary.LittleEndian.AppendUint32(out, small)
		out = binary.LittleEndian.AppendUint64(out, uint64(i)<<24)
		off += uint64(n)
	}
	return out
}

// TestRemovedEntries holds small the delta of a table of entries from
// which a few were removed: every entry after a removed one moves, and its
// offset changes by the removed record's length. Carried as differences
// from the base's entry at its new place, the delta is mostly zero bytes.
func TestRemovedEntries(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	lengths := make([]int, 20_000)
	for i := range lengths {
		lengths[i] = 60 + r.IntN(40)
	}
	removed := map[int]bool{}
	for range 30 {
		removed[r.IntN(len(lengths))] = true
	}
	base, tgt := entries(lengths, nil), entries(lengths, removed)
	var d bytes.Buffer
	if _, err := delta.Encode(&d, base, tgt); err != nil {
		t.Fatal(err)
	}
	nonzero := len(d.Bytes()) - bytes.Count(d.Bytes(), []byte{0})
	if nonzero > len(tgt)/10 {
		t.Errorf("the delta of %d bytes has %d bytes that are not zero, want at most a tenth of the %d-byte target", d.Len(), nonzero, len(tgt))
	}
	var out bytes.Buffer
	if _, err := delta.Apply(&out, bytes.NewReader(d.Bytes()), bytes.NewReader(base), int64(len(base)), int64(len(tgt))); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), tgt) {
		t.Error("the rebuilt target differs")
	}
}
