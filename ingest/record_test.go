package ingest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest/input/synthetic"
)

// roundTrip decodes line into a new T, then returns what the scratch store
// gives back for it and what a JSON round trip gives back (what the binary format
// must match): the views are built from these, so they must agree.
func roundTrip[T any](t *testing.T, line string) (binary, viaJSON *T, raw []byte) {
	t.Helper()
	v := new(T)
	if err := json.Unmarshal([]byte(line), v); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	// Encoded after other bytes, as readFile's workers encode a batch's
	// records one after the other: the record is its own slice.
	_, rec, err := appendScratchRecord([]byte("the record before"), 42, v)
	if err != nil {
		t.Fatal(err)
	}
	binary = new(T)
	n, raw, err := decodeRecord(rec, binary)
	if err != nil || n != 42 {
		t.Fatalf("%s: decode: line %d, %v", line, n, err)
	}
	j, err := domain.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	viaJSON = new(T)
	if err := json.Unmarshal(j, viaJSON); err != nil {
		t.Fatal(err)
	}
	return binary, viaJSON, raw
}

func checkRoundTrip[T any](t *testing.T, line string, withJSON bool) {
	t.Helper()
	got, want, raw := roundTrip[T](t, line)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\nbinary    %+v\nJSON trip %+v", line, got, want)
	}
	wantRaw, _ := domain.Marshal(want)
	switch {
	case withJSON && string(raw) != string(wantRaw):
		t.Errorf("%s: JSON after the fields %s, want %s", line, raw, wantRaw)
	case !withJSON && raw != nil:
		t.Errorf("%s: JSON after the fields of a type without it: %s", line, raw)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	cases := []struct {
		name, line string
		check      func(*testing.T, string, bool)
		withJSON   bool
	}{
		{"product", `{"identifiers":["gtin:1","x:2"],"manufacturer":"A & B <c>","trust_level":"L2","status":"active","updated_at":"2025-01-01T00:00:00Z","tenant":"t1"}`, checkRoundTrip[domain.Product], false},
		{"product with empty identifiers", `{"identifiers":[],"manufacturer":""}`, checkRoundTrip[domain.Product], false},
		{"product without identifiers", `{"manufacturer":"m"}`, checkRoundTrip[domain.Product], false},
		{"claim, every field", `{"id":"c1","subject":"s","predicate":"p","object":{"value": { "a" : [1, 2.50, "<x>"] },"unit":"kg","language":"de"},"claim_type":"FACT","method":"m","method_version":"1","source_ref":"src","publisher_ref":"pub","evidence_refs":["e1","e2"],"verification_status":"unverified","verification_method":"v","trust_level":"L1","confidence":0.1,"published_at":"2025-01-01T00:00:00Z","retrieved_at":"2025-01-02T00:00:00Z","superseded_by":"c2"}`, checkRoundTrip[domain.Claim], false},
		{"claim, nulls", `{"id":"c1","object":{"value":null,"unit":null,"language":null},"method":null,"evidence_refs":[],"confidence":null}`, checkRoundTrip[domain.Claim], false},
		{"claim without object value", `{"id":"c1","object":{}}`, checkRoundTrip[domain.Claim], false},
		{"claim, odd strings", `{"id":"c\u2028\u0000é","predicate":"\ud83d\ude00","object":{"value":"\u003c"},"confidence":1e-300}`, checkRoundTrip[domain.Claim], false},
		{"document", `{"id":"d","source_id":"s","media_type":"application/pdf","url":"https://x/?a=1&b=2","content_hash":"sha256:00","size":-12345678901,"retrieved_at":"r"}`, checkRoundTrip[domain.Document], true},
		{"document without url", `{"id":"d","url":null,"size":0}`, checkRoundTrip[domain.Document], true},
		{"evidence, byte range", `{"id":"e","claim_id":"c","document_id":"d","locator":{"kind":"byte_range","start":0,"end":9007199254740993}}`, checkRoundTrip[domain.Evidence], false},
		{"evidence, pointer", `{"id":"e","locator":{"kind":"json_pointer","pointer":"/a/0"}}`, checkRoundTrip[domain.Evidence], false},
		{"verdict", `{"subject":"s","class":"technical","value":"pass","rule":"r","evaluated_at":"t"}`, checkRoundTrip[domain.Verdict], false},
		{"verdict without rule", `{"subject":"s","class":"business","value":"fail"}`, checkRoundTrip[domain.Verdict], false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t, c.line, c.withJSON) })
	}
}

// TestRecordRoundTripGenerated checks every record of a small generated
// input the same way.
func TestRecordRoundTripGenerated(t *testing.T) {
	in := t.TempDir()
	if err := synthetic.Generate(synthetic.Options{Products: 50, Seed: 7, Out: in}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		file     string
		check    func(*testing.T, string, bool)
		withJSON bool
	}{
		{FileProducts, checkRoundTrip[domain.Product], false},
		{FileClaims, checkRoundTrip[domain.Claim], false},
		{FileDocuments, checkRoundTrip[domain.Document], true},
		{FileEvidence, checkRoundTrip[domain.Evidence], false},
		{FileVerdicts, checkRoundTrip[domain.Verdict], false},
	} {
		fh, err := os.Open(filepath.Join(in, f.file))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		lines := 0
		for sc.Scan() {
			f.check(t, sc.Text(), f.withJSON)
			lines++
		}
		fh.Close()
		if err := sc.Err(); err != nil || lines == 0 {
			t.Fatalf("%s: %d lines, %v", f.file, lines, err)
		}
	}
}

// TestRecordCorrupt: a record cut inside its fields is an error, never a
// panic.
func TestRecordCorrupt(t *testing.T) {
	c := &domain.Claim{ID: "c1", Subject: "s", EvidenceRefs: []string{"e"}, Confidence: new(float64)}
	_, full, err := appendScratchRecord(nil, 1, c)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(full); n++ {
		var c domain.Claim
		if _, _, err := decodeRecord(full[:n], &c); err == nil {
			t.Errorf("a record cut to %d of %d bytes decoded", n, len(full))
		}
	}
}
