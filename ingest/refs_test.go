package ingest_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
)

// Every reference a worker checks (resolveClaims, resolveEvidence,
// resolveVerdicts) rejects the line that breaks it, with its own reason, and
// a line whose references hold is accepted beside it in the same batch. The
// lines are added to the passport case, whose product internal_sku:BETA-1
// (added here) belongs to tenant beta, and whose document d2 comes from
// tenant acme's source.
func TestReferenceRejects(t *testing.T) {
	const (
		acmeSource   = "11111111-0000-4000-8000-000000000004"
		publicSource = "11111111-0000-4000-8000-000000000001"
	)
	claim := func(id, subject, source string) string {
		return `{"id":"` + id + `","subject":"` + subject + `","predicate":"p","object":{"value":1},"claim_type":"FACT","source_ref":"` + source + `","trust_level":"L1","retrieved_at":"2024-05-01T00:00:00Z"}`
	}
	evidence := func(id, claimID, doc string) string {
		return `{"id":"` + id + `","claim_id":"` + claimID + `","document_id":"` + doc + `","locator":{"kind":"json_pointer","pointer":"/x"}}`
	}
	verdict := func(subject string) string {
		return `{"subject":"` + subject + `","class":"technical","value":"pass","rule":"r","evaluated_at":"2024-01-01T00:00:00Z"}`
	}
	tests := []struct {
		name, file, line string
		reject           string // "" for accepted
	}{
		{"claim of a known product", "claims.ndjson", claim("k1", "internal_sku:BETA-1", publicSource), ""},
		{"claim of no product", "claims.ndjson", claim("k2", "gtin:09520000000028", publicSource), "subject gtin:09520000000028 names no product in products.ndjson"},
		{"claim of another tenant's source", "claims.ndjson", claim("k3", "internal_sku:BETA-1", acmeSource),
			`source_ref ` + acmeSource + ` belongs to tenant "acme" but product internal_sku:BETA-1 belongs to tenant "beta"`},
		{"evidence of a known claim and document", "evidence.ndjson", evidence("x1", "k1", "d1"), ""},
		{"evidence of no claim", "evidence.ndjson", evidence("x2", "nope", "d1"), "claim_id nope names no claim in claims.ndjson"},
		{"evidence of no document", "evidence.ndjson", evidence("x3", "k1", "nope"), "document_id nope names no document in documents.ndjson"},
		{"evidence of another tenant's document", "evidence.ndjson", evidence("x4", "k1", "d2"),
			`document d2 belongs to tenant "acme" but the claim's product belongs to tenant "beta"`},
		{"verdict of a known product", "verdicts.ndjson", verdict("internal_sku:BETA-1"), ""},
		{"verdict of no product", "verdicts.ndjson", verdict("gtin:09520000000028"), "subject gtin:09520000000028 names no product in products.ndjson"},
	}
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
	lineOf := map[string]int{} // test name -> its line in its file
	add := func(file, line string) int {
		path := filepath.Join(in, file)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, line+"\n"...)
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(raw), "\n")
	}
	add("products.ndjson", `{"identifiers":["internal_sku:BETA-1"],"manufacturer":"Beta","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z","tenant":"beta"}`)
	for _, tt := range tests {
		lineOf[tt.name] = add(tt.file, tt.line)
	}
	_, _, rejects, err := build(t, in, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := tt.file + ":" + strconv.Itoa(lineOf[tt.name]) + ": "
			var got string
			for _, l := range strings.Split(rejects, "\n") {
				if r, ok := strings.CutPrefix(l, prefix); ok {
					got = r
				}
			}
			if got != tt.reject {
				t.Errorf("reject of %s = %q, want %q", prefix, got, tt.reject)
			}
		})
	}
}
