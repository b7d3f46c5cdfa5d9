package jsonshape

import (
	"bytes"
	"fmt"
	"testing"
)

// docs are identity-like documents: a few shapes, shared values, and a
// subject that is each one's own.
func docs(n int) (out [][]byte, subjects []string) {
	makers := []string{"Bernard Dairy S.A.", "Moreau Organics S.A.", "KZN Tea SAS"}
	for i := range n {
		sub := fmt.Sprintf("gtin:%014d", i*7)
		brand := "null"
		if i%3 == 0 {
			brand = `"Tonique"`
		}
		ids := `"` + sub + `"`
		if i%5 == 0 {
			ids += fmt.Sprintf(`,"internal_sku:SKU%d"`, i)
		}
		d := fmt.Sprintf(`{"subject":%q,"identifiers":[%s],"trust_level":"L%d","manufacturer":%q,"brand":%s,"updated_at":"2025-08-%02dT18:52:36Z"}`,
			sub, ids, i%4, makers[i%len(makers)], brand, 1+i%28)
		out = append(out, []byte(d))
		subjects = append(subjects, sub)
	}
	return out, subjects
}

// Every document decodes to its bytes, whether its shape is in the table
// (most) or not (those stored piece by piece), and the table read back
// from its bytes decodes the same.
func TestDocumentsDecodeToTheirBytes(t *testing.T) {
	samples, _ := docs(400)
	table := Train(samples)
	again, err := Parse(table.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Train(samples).Bytes(), table.Bytes()) {
		t.Fatal("the same samples made another table")
	}
	all, subjects := docs(1000)
	extra := [][]byte{nil, []byte(`""`), []byte(`"`), []byte(`{"a":"\"x\"","b":[1,2]}`), []byte("not json at all"), bytes.Repeat([]byte(`"x",`), 2000)}
	all = append(all, extra...)
	subjects = append(subjects, make([]string, len(extra))...)
	kinds := map[byte]int{}
	size, raw := 0, 0
	for i, d := range all {
		enc := table.Encode([]byte("pre"), d, []byte(subjects[i]))
		if !bytes.HasPrefix(enc, []byte("pre")) {
			t.Fatalf("doc %d: the encoding lost dst", i)
		}
		enc = enc[3:]
		size, raw = size+len(enc), raw+len(d)
		n, _ := DecodedLen(enc)
		kinds[enc[len(encLen(n)):][0]]++
		for _, tb := range []*Table{table, again} {
			out, err := tb.Decode([]byte("x"), enc, []byte(subjects[i]), len(d))
			if err != nil || string(out) != "x"+string(d) {
				t.Fatalf("doc %d %q: %v %q", i, d, err, out)
			}
			if _, err := tb.Decode(nil, enc, []byte(subjects[i]), len(d)-1); len(d) > 0 && err == nil {
				t.Fatalf("doc %d decoded past max", i)
			}
		}
	}
	if kinds[kindShape] < 900 || kinds[kindPieces] == 0 {
		t.Errorf("kinds %v: want most by shape and a few piece by piece", kinds)
	}
	if size*3 > raw {
		t.Errorf("%d bytes stored for %d: want a third or less", size, raw)
	}
}

func encLen(n int) []byte {
	var b []byte
	for {
		if n < 0x80 {
			return append(b, byte(n))
		}
		b = append(b, byte(n)|0x80)
		n >>= 7
	}
}

// A document stored with one context and read with another is refused or
// reads as a document of the same length, never a panic.
func TestDecodeWithOtherContext(t *testing.T) {
	samples, subjects := docs(50)
	table := Train(samples)
	enc := table.Encode(nil, samples[3], []byte(subjects[3]))
	if out, err := table.Decode(nil, enc, []byte("gtin:00000000000001"), 1<<20); err != nil || len(out) != len(samples[3]) {
		t.Fatalf("%v %q", err, out)
	}
	if _, err := table.Decode(nil, enc, []byte("longer than the subject"), 1<<20); err == nil {
		t.Fatal("a longer context filled the document past its length")
	}
}

// Parse refuses a table cut short, one with bytes after it and one of an
// unknown version.
func TestParseRefusesBrokenTables(t *testing.T) {
	samples, _ := docs(100)
	good := Train(samples).Bytes()
	for name, b := range map[string][]byte{
		"empty":   nil,
		"version": append([]byte{9}, good[1:]...),
		"cut":     good[:len(good)-1],
		"after":   append(bytes.Clone(good), 0),
	} {
		if _, err := Parse(b); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// FuzzRoundTrip encodes arbitrary documents with a trained table and
// decodes them back; arbitrary encodings decode to a document of at most
// max bytes or an error, never a panic.
func FuzzRoundTrip(f *testing.F) {
	samples, subjects := docs(200)
	table := Train(samples)
	for i := range 5 {
		f.Add(samples[i], []byte(subjects[i]), table.Encode(nil, samples[i], []byte(subjects[i])))
	}
	f.Add([]byte(`"""`), []byte(""), []byte{3, 2, 2, 0, 1, 'x'})
	f.Fuzz(func(t *testing.T, doc, ctx, enc []byte) {
		e := table.Encode(nil, doc, ctx)
		out, err := table.Decode(nil, e, ctx, len(doc))
		if err != nil || !bytes.Equal(out, doc) {
			t.Fatalf("%q: %v %q", doc, err, out)
		}
		const max = 1 << 12
		if out, err := table.Decode([]byte("pre"), enc, ctx, max); err != nil && string(out) != "pre" || len(out) > 3+max {
			t.Fatalf("%v: %d bytes", err, len(out))
		}
	})
}

// FuzzParse reads arbitrary bytes as a table: refused, or a table that
// encodes and decodes a document exactly.
func FuzzParse(f *testing.F) {
	samples, _ := docs(100)
	f.Add(Train(samples).Bytes(), samples[0])
	f.Add(Train(nil).Bytes(), []byte("x"))
	f.Fuzz(func(t *testing.T, b, doc []byte) {
		table, err := Parse(b)
		if err != nil {
			return
		}
		out, err := table.Decode(nil, table.Encode(nil, doc, nil), nil, len(doc))
		if err != nil || !bytes.Equal(out, doc) {
			t.Fatalf("%q: %v %q", doc, err, out)
		}
	})
}
