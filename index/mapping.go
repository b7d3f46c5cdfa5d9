package index

import (
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/mapping"
)

// Files and folders inside an index directory.
const (
	metaFile     = "meta.json"
	namesFile    = "names.txt"
	productsDir  = "products.bleve"
	formatNumber = 1
)

// Fields of the products index (one Bleve document per Doc; document ID = the doc's ordinal, see
// docID). Nothing is stored: hits are read from the doc store.
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

func productsMapping() *mapping.IndexMappingImpl {
	m, dm := staticMapping()
	dm.AddFieldMappingsAt(fName, keywordField(true, false, false))
	dm.AddFieldMappingsAt(fNameBlock, keywordField(true, false, false))
	dm.AddFieldMappingsAt(fVis, keywordField(true, false, false))
	dm.AddFieldMappingsAt(fShadow, keywordField(true, false, false))
	dm.AddFieldMappingsAt(fTrust, keywordField(true, false, false))
	dm.AddFieldMappingsAt(fPassport, keywordField(true, false, false))
	dm.AddFieldMappingsAt(fUpdated, keywordField(true, false, true))
	dm.AddFieldMappingsAt(fUpdatedLevels, keywordField(true, false, false))
	return m
}
