package domain

import "encoding/json"

// Product is an input line of products.ndjson. Identifiers holds subject
// strings; the first is canonical.
type Product struct {
	Identifiers     []string `json:"identifiers"`
	Manufacturer    string   `json:"manufacturer"`
	ManufacturerGLN string   `json:"manufacturer_gln,omitempty"`
	Brand           string   `json:"brand,omitempty"`
	TrustLevel      string   `json:"trust_level"`
	Status          string   `json:"status"`
	UpdatedAt       string   `json:"updated_at"`
	Tenant          string   `json:"tenant,omitempty"`
}

// Identity is the data of the identity endpoint.
type Identity struct {
	Subject         string   `json:"subject"`
	Identifiers     []string `json:"identifiers"`
	TrustLevel      string   `json:"trust_level"`
	Status          string   `json:"status"`
	Manufacturer    string   `json:"manufacturer"`
	ManufacturerGLN *string  `json:"manufacturer_gln"`
	Brand           *string  `json:"brand"`
	UpdatedAt       string   `json:"updated_at"`
	HasPassport     bool     `json:"has_passport"`
}

// PassportData is the data of the passport endpoint.
type PassportData struct {
	Subject    string                     `json:"subject"`
	Attributes map[string]json.RawMessage `json:"attributes"`
	// Units maps each predicate of attributes whose claim has a unit to that
	// unit; it is left out when no attribute has one.
	Units     map[string]string `json:"units,omitempty"`
	UpdatedAt string            `json:"updated_at"`
}

// Absence is the data of a product answer that found no product or no
// passport: what was asked, how it was read, and whether a product is
// stored under it (a product with no passport, or whose claims are all
// withheld, is known; Subject is then its canonical subject).
type Absence struct {
	Input         string `json:"input"`
	InterpretedAs string `json:"interpreted_as"`
	HasProduct    bool   `json:"has_product"`
	Subject       string `json:"subject,omitempty"`
}

// OFFSKUPrefix is what pds import off puts before an Open Food Facts code
// that is no valid GTIN (a wrong check digit, say) to keep the product as an
// internal SKU: code 2000000001273 is stored as
// internal_sku:off-2000000001273.
const OFFSKUPrefix = "off-"

// CodeSKUPrefixes are the prefixes under which a product code that fails
// its GS1 syntax may be stored as an internal SKU: none (the code as it is)
// and OFFSKUPrefix. A product lookup whose value fails syntax names such a
// stored product in its INVALID_IDENTIFIER detail.
var CodeSKUPrefixes = []string{"", OFFSKUPrefix}

// PublicProduct is what the API answers a caller without a tenant about one
// public product (the answers service.Public gets): its identity and its
// passport. pds export writes one row of it per product.
type PublicProduct struct {
	Identity Identity
	Passport PassportAnswer
}

// PassportAnswer is the passport endpoint's answer in domain types: its
// status (found, or not_found or unknown with Reason when the product has
// no passport or every claim was withheld), Data when found, the sources
// that contributed (each with its licence and attribution), the verdicts,
// and the coverage, whose SourcesSkipped lists the sources whose claims were
// withheld for their licence (LICENCE_RESTRICTED).
type PassportAnswer struct {
	Status     string
	Reason     string
	Data       *PassportData
	Sources    []Source
	Validation *Validation
	Coverage   Coverage
}
