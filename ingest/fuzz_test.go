package ingest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	fastjson "github.com/segmentio/encoding/json"

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
		// readFile's workers encode the record for the scratch store next (a
		// failure there is a reject); what they write must decode.
		_, rec, err := appendScratchRecord(nil, 7, p.v)
		if err != nil || rec == nil {
			return
		}
		if n, _, err := decodeRecord(rec, reflect.New(reflect.TypeOf(p.v).Elem()).Interface()); err != nil || n != 7 {
			t.Fatalf("scratch record does not decode: line %d, %v", n, err)
		}
	})
}

// FuzzFastDecodeMatchesStd holds unmarshal's fast pass (segmentio/encoding)
// to encoding/json: every line the fast pass accepts, for every record type,
// encoding/json accepts too with unknown members refused, and decodes to the
// same value. Lines the fast pass refuses go to encoding/json anyway.
//
//	go test -run '^$' -fuzz '^FuzzFastDecodeMatchesStd$' -fuzztime 10m ./ingest/
func FuzzFastDecodeMatchesStd(f *testing.F) {
	seeds := [][]any{
		{uint8(0), []byte(`{"id":"a","name":"Op","gln":"9520000000028"}`)},
		{uint8(1), []byte(`{"id":"s","kind":"web","origin":"https://x","trust_tier":2,"licence_name":"x","covers":{"namespaces":["gtin"],"gtin_prefixes":["0952"]}}`)},
		{uint8(2), []byte(`{"identifiers":["gtin:9520123456788","internal_sku:A-1"],"manufacturer":"M\u00e9","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z"}`)},
		{uint8(3), []byte(`{"id":"c1","subject":"gtin:09520123456788","predicate":"p","object":{"value": {"a" : [1, 2.5e3, null, "x\"y"]},"unit":"g","language":null},"claim_type":"FACT","trust_level":"L2","confidence":0.5,"retrieved_at":"2025-01-01T00:00:00Z"}`)},
		{uint8(3), []byte(`{"ID":"c1","Subject":"s","object":{"value":1E400}}`)},
		{uint8(3), []byte(`{"id":"c1","id":"c2","confidence":01}`)},
		{uint8(4), []byte(`{"id":"d1","source_id":"s","media_type":"text/html","size":1,"url":null,"retrieved_at":"2025-01-01T00:00:00Z"}`)},
		{uint8(5), []byte(`{"id":"e1","claim_id":"c1","document_id":"d1","locator":{"kind":"byte_range","start":0,"end":9}}`)},
		{uint8(6), []byte(`{"subject":"gtin:09520123456788","class":"authority","value":"attested","rule":"r\ud800","evaluated_at":"2025-01-01T00:00:00+02:00"}`)},
		{uint8(6), []byte("{\"subject\":\"a\xffb\",\"class\":\"\t\"}")},
		{uint8(2), []byte(`{"identifiers":[1]} `)}, {uint8(2), []byte(`{"identifiers":null}x`)},
	}
	fuzzseed.Seed(f, seeds...)
	f.Fuzz(func(t *testing.T, which uint8, line []byte) {
		switch which % 7 {
		case 0:
			sameDecode[domain.Party](t, line)
		case 1:
			sameDecode[domain.Source](t, line)
		case 2:
			sameDecode[domain.Product](t, line)
		case 3:
			sameDecode[domain.Claim](t, line)
		case 4:
			sameDecode[domain.Document](t, line)
		case 5:
			sameDecode[domain.Evidence](t, line)
		case 6:
			sameDecode[domain.Verdict](t, line)
		}
	})
}

func sameDecode[T any](t *testing.T, line []byte) {
	line = bytes.TrimSpace(line)
	var fast T
	before := bytes.Clone(line)
	rest, err := fastjson.Parse(line, &fast, fastFlags)
	if !bytes.Equal(line, before) {
		t.Fatalf("the fast pass wrote into its input (its strings point into it): %q became %q", before, line)
	}
	if err != nil || len(rest) != 0 {
		return
	}
	var std T
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&std); err != nil || dec.InputOffset() != int64(len(line)) {
		t.Fatalf("the fast pass accepts %q, encoding/json does not: %v", line, err)
	}
	if !reflect.DeepEqual(fast, std) {
		t.Fatalf("%q decodes differently:\nfast %#v\nstd  %#v", line, fast, std)
	}
}
