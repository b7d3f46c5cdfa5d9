package ingest

import (
	"encoding/json"
	"testing"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/internal/fuzzseed"
)

// FuzzParseLine feeds arbitrary lines to the parser of every input file:
// each either rejects the line with a reason or returns a record that
// encodes to JSON; none panics.
//
//	go test -run '^$' -fuzz '^FuzzParseLine$' -fuzztime 10m ./ingest/
func FuzzParseLine(f *testing.F) {
	src := "11111111-0000-4000-8000-000000000001"
	b := &builder{parties: map[string]*domain.Party{"aaaaaaaa-0000-4000-8000-000000000001": {ID: "aaaaaaaa-0000-4000-8000-000000000001", Name: "P"}},
		cat: catalog{sources: map[string]*domain.Source{src: {ID: src, Kind: "registry", Origin: "x", LicenceName: "x"}}}}
	var parsers []parseFunc
	for _, ph := range b.phases() {
		parsers = append(parsers, ph.parse)
	}
	seeds := []string{
		`{"id":"aaaaaaaa-0000-4000-8000-000000000002","name":"Op","gln":"9520000000028"}`,
		`{"id":"` + src + `","kind":"web","origin":"https://x","trust_tier":2,"licence_name":"x","covers":{"namespaces":["gtin"],"gtin_prefixes":["0952"]}}`,
		`{"identifiers":["gtin:9520123456788","internal_sku:A-1"],"manufacturer":"M","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z"}`,
		`{"id":"c1","subject":"gtin:09520123456788","predicate":"p","object":{"value":{"a":[1,2]},"unit":"g"},"claim_type":"SOURCE_ASSERTION","source_ref":"` + src + `","trust_level":"L2","confidence":0.5,"retrieved_at":"2025-01-01T00:00:00Z","superseded_by":"c2"}`,
		`{"id":"d1","source_id":"` + src + `","media_type":"text/html","content_hash":"sha256:0000000000000000000000000000000000000000000000000000000000000001","size":1,"retrieved_at":"2025-01-01T00:00:00Z"}`,
		`{"id":"e1","claim_id":"c1","document_id":"d1","locator":{"kind":"byte_range","start":0,"end":9}}`,
		`{"subject":"gtin:09520123456788","class":"authority","value":"attested","rule":"r","evaluated_at":"2025-01-01T00:00:00+02:00"}`,
		`{"identifiers":[1]}`, `[]`, `{`, `null`,
	}
	var all [][]any
	for i, s := range seeds {
		all = append(all, []any{uint8(i), []byte(s)})
	}
	fuzzseed.Seed(f, all...)
	f.Fuzz(func(t *testing.T, which uint8, line []byte) {
		p, r := parsers[int(which)%len(parsers)](line)
		if r != nil {
			if r.reason == "" {
				t.Fatal("reject without a reason")
			}
			return
		}
		if _, err := json.Marshal(p.v); err != nil {
			t.Fatalf("accepted record does not encode: %v", err)
		}
	})
}
