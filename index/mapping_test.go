package index

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/document"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// TestMapDocumentMatchesBleve holds the direct path of productMapping.MapDocument to what
// Bleve's own mapping makes of the same fields given as a map: the same fields, with the same
// names, values, indexing options, list positions and terms, and no composite field.
func TestMapDocumentMatchesBleve(t *testing.T) {
	key := timeKey(time.Date(2025, 3, 4, 5, 6, 7, 123e6, time.UTC))
	cases := []struct {
		name   string
		fields docFields
	}{
		{"public, named", docFields{
			{name: fTrust, value: "3"}, {name: fPassport, value: "1"}, {name: fUpdated, value: exactTerm(key)},
			{name: fUpdatedLevels, list: true, values: levelTerms(key)}, {name: fVis, value: visPublic},
			{name: fName, value: "acme foods"}, {name: fNameBlock, value: blockTerm("acme foods", 2)}}},
		{"public, shadowed for two tenants", docFields{
			{name: fTrust, value: "0"}, {name: fPassport, value: "0"}, {name: fUpdated, value: exactTerm(key)},
			{name: fUpdatedLevels, list: true, values: levelTerms(key)}, {name: fShadow, list: true, values: []string{"acme-retail", "beta"}},
			{name: fVis, value: visPublic}}},
		{"an empty list", docFields{
			{name: fTrust, value: "1"}, {name: fShadow, list: true}, {name: fVis, value: visPublic}}},
		{"tenant, no name", docFields{
			{name: fTrust, value: "5"}, {name: fPassport, value: "1"}, {name: fUpdated, value: exactTerm(key)},
			{name: fUpdatedLevels, list: true, values: levelTerms(key)}, {name: fVis, value: visTenant + "acme-retail"}}},
	}
	m := productsMapping()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			asMap := map[string]interface{}{}
			for _, f := range c.fields {
				if f.list {
					asMap[f.name] = f.values
				} else {
					asMap[f.name] = f.value
				}
			}
			want := document.NewDocument("1")
			if err := m.IndexMappingImpl.MapDocument(want, asMap); err != nil {
				t.Fatal(err)
			}
			got := document.NewDocument("1")
			if err := m.MapDocument(got, &c.fields); err != nil {
				t.Fatal(err)
			}
			if g, w := describe(got), describe(want); !slices.Equal(g, w) {
				t.Errorf("direct path:\n%q\nBleve's walk:\n%q", g, w)
			}
			if got.Indexed() != want.Indexed() || got.HasComposite() || want.HasComposite() {
				t.Errorf("indexed %v / %v, composite %v / %v", got.Indexed(), want.Indexed(), got.HasComposite(), want.HasComposite())
			}
		})
	}
	if err := m.MapDocument(document.NewDocument("1"), &docFields{{name: "nope", value: "x"}}); err == nil {
		t.Error("a field outside the mapping was accepted")
	}
}

// describe lists a document's fields, each with its analysed terms, in a fixed order.
func describe(d *document.Document) []string {
	var out []string
	d.VisitFields(func(f bleveindex.Field) {
		f.Analyze()
		var terms []string
		for term := range f.AnalyzedTokenFrequencies() {
			terms = append(terms, term)
		}
		slices.Sort(terms)
		out = append(out, fmt.Sprintf("%s %v %q opts=%d type=%c terms=%q", f.Name(), f.ArrayPositions(), f.Value(), f.Options(), f.EncodedFieldType(), terms))
	})
	slices.Sort(out)
	return out
}
