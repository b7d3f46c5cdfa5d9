package kv

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/productdata/pds/internal/fuzzseed"
)

// FuzzViewsPart decodes arbitrary bytes as a TagViews value, with a store's
// dictionary: a read ends in a view or an error, never a panic, and never
// yields more than the store's largest frame.
func FuzzViewsPart(f *testing.F) {
	_, p, e := testViews(1)
	enc, err := newEncoder(Dictionaries{Views: rawDict([][]byte{p, e, p, e}, viewsDictSize)})
	if err != nil {
		f.Fatal(err)
	}
	good := enc.Views(append(p, e...), len(p))
	const max = 4096
	d, err := newViewsDecoder(append(binary.AppendUvarint(nil, max), rawDict([][]byte{p, e, p, e}, viewsDictSize)...))
	if err != nil {
		f.Fatal(err)
	}
	defer d.close()
	fuzzseed.Seed(f, []any{good}, []any{good[:len(good)-1]}, []any{[]byte{0, 0}}, []any{[]byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0}})
	f.Fuzz(func(t *testing.T, v []byte) {
		for _, tag := range []byte{TagPassport, TagEvidence} {
			out, err := d.part([]byte("pre"), v, tag)
			if err == nil && len(out) > 3+max || err != nil && string(out) != "pre" {
				t.Fatalf("%c: %d bytes, %v", tag, len(out), err)
			}
		}
	})
}

// A value decodes to the views it was made of, with or without room in the
// caller's buffer, and a frame longer than the store's largest is refused.
func TestViewsPart(t *testing.T) {
	_, p, e := testViews(7)
	enc, err := newEncoder(Dictionaries{})
	if err != nil {
		t.Fatal(err)
	}
	v := enc.Views(append(p, e...), len(p))
	for _, max := range []uint64{uint64(len(p) + len(e)), uint64(len(p) + len(e) - 1)} {
		d, err := newViewsDecoder(binary.AppendUvarint(nil, max))
		if err != nil {
			t.Fatal(err)
		}
		for tag, want := range map[byte][]byte{TagPassport: p, TagEvidence: e} {
			for _, dst := range [][]byte{nil, []byte("pre"), make([]byte, 2, 1<<16)} {
				out, err := d.part(dst, v, tag)
				fits := max == uint64(len(p)+len(e))
				if fits && (err != nil || string(out) != string(dst)+string(want)) || !fits && err == nil {
					t.Errorf("max %d, %c, dst %q: %v %q", max, tag, dst, err, out)
				}
			}
		}
		d.close()
	}
}

// rawDict returns the last size bytes of the samples, joined: a raw
// dictionary is history the values may refer to, and its end is the
// nearest to them. Point indexes of version 2 had their identity
// dictionary made so.
func rawDict(samples [][]byte, size int) []byte {
	var d []byte
	for i := len(samples) - 1; i >= 0 && len(d) < size; i-- {
		d = append(slices.Clone(samples[i]), d...)
	}
	if len(d) > size {
		d = d[len(d)-size:]
	}
	if len(d) < minDictSize {
		return nil
	}
	return d
}
