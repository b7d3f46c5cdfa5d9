package index

import (
	"fmt"
	"slices"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
)

// Files and folders inside an index directory.
const (
	metaFile     = "meta.json"
	namesFile    = "names.txt"
	productsDir  = "products.bleve"
	formatNumber = 2
)

// Fields of the products index (one Bleve document per Doc; document ID = the doc's position, see
// posID). Nothing is stored: hits are read from the doc store.
const (
	fName          = "n"  // normalised manufacturer name (keyword)
	fNameBlock     = "nb" // name + "\x1f" + block number: a run of blockSize docs of one name in subject order
	fVis           = "v"  // "p" for public docs, "t:" + tenant for tenant docs
	fShadow        = "sh" // tenants that have their own doc for this subject (public docs only)
	fTrust         = "t"  // "0".."5"
	fPassport      = "p"  // "1" or "0"
	fUpdated       = "u"  // exact time key (16 hex digits), doc values for sorting
	fUpdatedLevels = "ul" // coarser time terms (see timeterms.go)
)

const (
	visPublic    = "p"
	visTenant    = "t:"
	reservedByte = "\x00" // not allowed in subjects and tenant names
)

func keywordField(index, store, docValues bool) *mapping.FieldMapping {
	f := bleve.NewKeywordFieldMapping()
	f.Index = index
	f.Store = store
	f.DocValues = docValues
	f.IncludeInAll = false
	f.IncludeTermVectors = false
	f.SkipFreqNorm = true
	return f
}

// staticMapping returns an index mapping whose default document mapping indexes only the fields
// added to it, with the composite "_all" field disabled.
func staticMapping() (*mapping.IndexMappingImpl, *mapping.DocumentMapping) {
	m := bleve.NewIndexMapping()
	m.DefaultAnalyzer = keyword.Name
	m.IndexDynamic = false
	m.StoreDynamic = false
	m.DocValuesDynamic = false
	dm := bleve.NewDocumentStaticMapping()
	dm.AddSubDocumentMapping("_all", bleve.NewDocumentDisabledMapping())
	m.DefaultMapping = dm
	return m, dm
}

// docValueFields are the fields kept as doc values (for sorting); every other field is indexed
// only.
var docValueFields = []string{fUpdated}

// productsMapping returns the mapping of the products index: every field a keyword, indexed and
// not stored.
func productsMapping() *productMapping {
	m, dm := staticMapping()
	opts := map[string]index.FieldIndexingOptions{}
	for _, name := range []string{fName, fNameBlock, fVis, fShadow, fTrust, fPassport, fUpdated, fUpdatedLevels} {
		fm := keywordField(true, false, slices.Contains(docValueFields, name))
		dm.AddFieldMappingsAt(name, fm)
		opts[name] = fm.Options()
	}
	return &productMapping{IndexMappingImpl: m, keyword: m.AnalyzerNamed(keyword.Name), options: opts}
}

// productMapping is the products mapping with a direct path for the docs Builder.Add makes.
// Bleve's mapping finds a document's fields by walking a map[string]interface{} with
// reflection, field by field against the mapping: 2.2% of a 200,000-product build's CPU
// (pprof, 2026-11-27). A *docFields names its fields and values already, and each becomes the
// field that walk would make: a keyword text field with the field mapping's indexing options,
// one per value of a list, with the value's position in the list. Anything else (the
// placeholder doc of an empty index) goes through Bleve's walk. The mapping stored in the index
// is the embedded one, unchanged.
type productMapping struct {
	*mapping.IndexMappingImpl
	keyword analysis.Analyzer
	options map[string]index.FieldIndexingOptions
}

// docFields are one doc's fields, in the order they are added to the Bleve document.
type docFields []docField

// docField is one field: a single value, or (list) the values of a list, which may be empty.
type docField struct {
	name   string
	value  string
	list   bool
	values []string
}

func (m *productMapping) MapDocument(doc *document.Document, data interface{}) error {
	fields, ok := data.(*docFields)
	if !ok {
		return m.IndexMappingImpl.MapDocument(doc, data)
	}
	for _, f := range *fields {
		opts, ok := m.options[f.name]
		if !ok {
			return fmt.Errorf("index: field %q is not in the mapping", f.name)
		}
		if !f.list {
			doc.AddField(document.NewTextFieldCustom(f.name, []uint64{}, []byte(f.value), opts, m.keyword))
			continue
		}
		for i, v := range f.values {
			doc.AddField(document.NewTextFieldCustom(f.name, []uint64{uint64(i)}, []byte(v), opts, m.keyword))
		}
	}
	doc.SetIndexed()
	return nil
}
