package openapi_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/productdata/pds/http/openapi"
)

// The document loads and validates as OpenAPI 3.1, and its JSON form is the
// same document.
func TestDocumentValidates(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.YAML)
	if err != nil {
		t.Fatal(err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %q, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	js, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	fromJSON, err := openapi3.NewLoader().LoadFromData(js)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromJSON.Paths.Map()) != len(doc.Paths.Map()) || len(fromJSON.Paths.Map()) == 0 {
		t.Fatalf("JSON form has %d paths, YAML %d", len(fromJSON.Paths.Map()), len(doc.Paths.Map()))
	}
}
