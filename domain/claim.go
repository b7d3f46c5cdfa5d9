package domain

import "encoding/json"

// Claim types (spec 2.2). ClaimSourceAssertion is served as the two words the
// specification lists; ingest also accepts SOURCE_ASSERTION and SOURCE-ASSERTION.
const (
	ClaimFact            = "FACT"
	ClaimSourceAssertion = "SOURCE ASSERTION"
	ClaimValidation      = "VALIDATION"
	ClaimInference       = "INFERENCE"
	ClaimEstimation      = "ESTIMATION"
	ClaimUnknown         = "UNKNOWN"
)

// ClaimTypes lists every claim type in the order of the specification.
var ClaimTypes = []string{ClaimFact, ClaimSourceAssertion, ClaimValidation, ClaimInference, ClaimEstimation, ClaimUnknown}

// NormalizeClaimType maps the accepted spellings of a claim type to the served
// one. ok is false for a value outside the enum.
func NormalizeClaimType(s string) (string, bool) {
	switch s {
	case "SOURCE_ASSERTION", "SOURCE-ASSERTION":
		return ClaimSourceAssertion, true
	}
	for _, t := range ClaimTypes {
		if s == t {
			return s, true
		}
	}
	return "", false
}

// NeedsMethod reports whether a claim type must carry a method.
func NeedsMethod(claimType string) bool {
	return claimType == ClaimInference || claimType == ClaimEstimation
}

// VerificationStatuses are the allowed values of Claim.VerificationStatus.
var VerificationStatuses = []string{"unverified", "domain_verified", "registry_verified", "contract_verified", "disputed"}

// TrustLevels are the allowed trust levels, lowest first.
var TrustLevels = []string{"L0", "L1", "L2", "L3", "L4", "L5"}

// TrustRank returns the rank of a trust level (L0 = 0 … L5 = 5), or -1.
func TrustRank(level string) int {
	for i, l := range TrustLevels {
		if l == level {
			return i
		}
	}
	return -1
}

// ClaimObject is the object of a claim.
type ClaimObject struct {
	Value    json.RawMessage `json:"value"`
	Unit     *string         `json:"unit"`
	Language *string         `json:"language"`
}

// Claim is a statement about a subject (spec 2.2). It is both an input line of
// claims.ndjson and what the service returns.
type Claim struct {
	ID                 string      `json:"id"`
	Subject            string      `json:"subject"`
	Predicate          string      `json:"predicate"`
	Object             ClaimObject `json:"object"`
	ClaimType          string      `json:"claim_type"`
	Method             *string     `json:"method"`
	MethodVersion      *string     `json:"method_version"`
	SourceRef          *string     `json:"source_ref"`
	PublisherRef       *string     `json:"publisher_ref"`
	EvidenceRefs       []string    `json:"evidence_refs,omitempty"`
	VerificationStatus string      `json:"verification_status,omitempty"`
	VerificationMethod *string     `json:"verification_method"`
	TrustLevel         string      `json:"trust_level"`
	Confidence         *float64    `json:"confidence,omitempty"`
	PublishedAt        *string     `json:"published_at"`
	RetrievedAt        string      `json:"retrieved_at"`
	SupersededBy       *string     `json:"superseded_by"`
}

// Str returns the string a nullable string points to, or "".
func Str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Attribute is the object as the passport's data.attributes shows it: its
// value, and its unit ("" when it has none), which data.units carries, so that
// a quantity keeps its unit (net_content 1 l is attributes.net_content 1 and
// units.net_content "l", never a bare 1).
func (o ClaimObject) Attribute() (json.RawMessage, string) {
	if o.Unit == nil {
		return o.Value, ""
	}
	return o.Value, *o.Unit
}
