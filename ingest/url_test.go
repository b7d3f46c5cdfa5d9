package ingest_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest"
)

// A document's url is an absolute http or https URL, or absent: any other
// scheme (javascript:, data:), a relative or scheme-relative URL, is refused
// with file, line and member.
func TestDocumentURLIsHTTPOrHTTPS(t *testing.T) {
	const src = "11111111-0000-4000-8000-000000000001"
	document := func(id, url string) string {
		return `{"id":"` + id + `","source_id":"` + src + `","media_type":"text/html"` + url +
			`,"content_hash":"sha256:0000000000000000000000000000000000000000000000000000000000000001","size":1,"retrieved_at":"2025-01-01T00:00:00Z"}` + "\n"
	}
	accepted := []string{`,"url":"https://registry.example/p/1.json"`, `,"url":"http://registry.example/p/2"`,
		`,"url":"HTTPS://Registry.Example/p/3"`, `,"url":null`, ``}
	refused := []string{`javascript:alert(1)`, `JavaScript:alert(document.cookie)`, `data:text/html,<script>alert(1)</script>`,
		`//registry.example/p/4`, `/p/5`, `ftp://registry.example/p/6`, `https:///p/7`, ` javascript:alert(1)`}
	var docs strings.Builder
	for i, u := range accepted {
		docs.WriteString(document("ok"+string(rune('a'+i)), u))
	}
	for i, u := range refused {
		docs.WriteString(document("bad"+string(rune('a'+i)), `,"url":"`+u+`"`))
	}
	in := t.TempDir()
	files := map[string]string{
		"sources.ndjson": `{"id":"` + src + `","kind":"registry","origin":"https://registry.example","trust_tier":2,"licence_name":"CC0",` +
			`"may_redistribute_verbatim":true,"may_redistribute_derived":true,"covers":{"namespaces":["gtin"]}}` + "\n",
		"products.ndjson":  `{"identifiers":["gtin:09520123456788"],"manufacturer":"M","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z"}` + "\n",
		"documents.ndjson": docs.String(),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(in, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, sum, rejects, err := build(t, in, false)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Accepted["documents.ndjson"] != int64(len(accepted)) || sum.Rejected["documents.ndjson"] != int64(len(refused)) {
		t.Errorf("documents accepted %d, rejected %d; want %d and %d\n%s", sum.Accepted["documents.ndjson"], sum.Rejected["documents.ndjson"],
			len(accepted), len(refused), rejects)
	}
	if want := `documents.ndjson:6: url "javascript:alert(1)" is not an absolute http or https URL`; !strings.Contains(rejects, want) {
		t.Errorf("rejects lack %q:\n%s", want, rejects)
	}
	_, _, _, err = build(t, in, true)
	if !errors.Is(err, ingest.ErrStrict) || !strings.Contains(err.Error(), `documents.ndjson:6: url "javascript:alert(1)"`) {
		t.Errorf("strict: %v", err)
	}
}
