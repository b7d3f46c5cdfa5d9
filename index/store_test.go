package index

import (
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
