package index

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, r := range []record{
		{subject: "gtin:09520123456788", manufacturer: "Müller Milch GmbH", brand: "Müllermilch",
			updated: "2024-02-29T23:59:59.123456789+01:00", trust: 5, passport: true, block: 300,
			visibility: "acme", shadowed: "a\x00b"},
		{subject: "internal_sku:x", updated: "0001-01-01T00:00:00Z"},
	} {
		got, err := decodeRecord(r.encode(nil), formatNumber)
		if err != nil || got != r {
			t.Errorf("round trip of %+v gave %+v, %v", r, got, err)
		}
		b := r.encode(nil)
		for n := 0; n < len(b); n++ {
			if _, err := decodeRecord(b[:n], formatNumber); err == nil {
				t.Errorf("%+v truncated to %d bytes decoded", r, n)
			}
		}
	}
}

func TestDocID(t *testing.T) {
	for _, ord := range []uint32{0, 1, 255, 1 << 20, maxDocs} {
		got, err := parseDocID(docID(ord))
		if err != nil || got != ord {
			t.Errorf("docID %d → %q → %d, %v", ord, docID(ord), got, err)
		}
	}
	if docID(9) >= docID(10) || docID(255) >= docID(256) {
		t.Error("doc IDs do not sort like ordinals")
	}
	for _, bad := range []string{"", "empty", "0000000g", "000000001"} {
		if _, err := parseDocID(bad); err == nil {
			t.Errorf("parseDocID(%q) succeeded", bad)
		}
	}
}

// A doc store whose entries are not whole, or whose positions do not rise,
// is refused by name, whether it is read into memory (a build's base) or
// copied and mapped (a served index), and nothing of it is read.
func TestDamagedDocEntriesAreRefused(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func([]byte) []byte
		want   string
	}{
		{"cut", func(b []byte) []byte { return b[:len(b)-1] }, "docs.idx has"},
		{"grown", func(b []byte) []byte { return append(b, 0) }, "docs.idx has"},
		{"positions out of order", func(b []byte) []byte {
			e := idxEntrySize
			a, c := slices.Clone(b[20:28]), slices.Clone(b[e+20:e+28])
			copy(b[20:28], c)
			copy(b[e+20:e+28], a)
			return b
		}, "position of doc 1 does not rise"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ix")
			writeTestIndex(t, dir, modelDocs(50, 1), 4, batchSize)
			path := filepath.Join(dir, docsIdxFile)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			docs := len(b) / idxEntrySize
			if err := os.WriteFile(path, c.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := openStore(dir, docs, formatNumber); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("read into memory: %v, want an error saying %q", err, c.want)
			}
			if _, err := OpenWith(dir, OpenOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("served: %v, want an error saying %q", err, c.want)
			}
		})
	}
}
