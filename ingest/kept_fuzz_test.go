package ingest

import (
	"bytes"
	"testing"
	"time"

	"github.com/productdata/pds/index"
)

// FuzzKeptRecords: the kept records' two encodings read back what they
// wrote, and any other bytes are an error, never a panic.
func FuzzKeptRecords(f *testing.F) {
	rs := rawSubject{subject: "gtin:1", product: []byte("p"), claims: [][]byte{[]byte("c1"), nil}, verdicts: [][]byte{[]byte("v")}}
	f.Add(appendKept(nil, &rs))
	s := summary{counts: [3]int64{2, 3, 1}, views: 2, sources: []string{"s1"}, docs: []string{"d1", "d2"},
		index: []index.Doc{{Subject: "gtin:1", Manufacturer: "M", TrustLevel: 3, HasPassport: true, UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("", 3600)), ShadowedFor: []string{"t"}}, {Subject: "gtin:1", Visibility: "t"}}}
	f.Add(appendSummary(nil, &s))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if rs, err := decodeKept("s", b); err == nil {
			enc := appendKept(nil, &rs)
			again, err := decodeKept("s", enc)
			if err != nil || !bytes.Equal(appendKept(nil, &again), enc) {
				t.Fatalf("records %x read back as %+v (%v)", b, again, err)
			}
		}
		if s, err := decodeSummary("s", b); err == nil {
			enc := appendSummary(nil, &s)
			again, err := decodeSummary("s", enc)
			if err != nil || !bytes.Equal(appendSummary(nil, &again), enc) {
				t.Fatalf("summary %+v read back as %+v (%v)", s, again, err)
			}
		}
	})
}
