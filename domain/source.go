package domain

// Source kinds (spec 2.3).
var SourceKinds = []string{"registry", "standard_resolver", "publisher_endpoint", "partner_feed", "tenant_upload", "web"}

// SourceKindTenantUpload is the kind whose data only its own tenant may see.
const SourceKindTenantUpload = "tenant_upload"

// MaxTrustTier is the highest allowed Source.TrustTier.
const MaxTrustTier = 4

// Covers says which identifiers a source speaks for.
type Covers struct {
	Namespaces   []string `json:"namespaces,omitempty"`
	GTINPrefixes []string `json:"gtin_prefixes,omitempty"`
}

// Source is where documents come from, with its licence terms (spec 2.3). As an
// input line of sources.ndjson it also carries Tenant and Covers.
type Source struct {
	ID                      string  `json:"id"`
	Kind                    string  `json:"kind"`
	Origin                  string  `json:"origin"`
	OperatorPartyID         *string `json:"operator_party_id"`
	TrustTier               int     `json:"trust_tier"`
	RobotsPolicy            *string `json:"robots_policy"`
	Enabled                 *bool   `json:"enabled,omitempty"`
	LicenceName             string  `json:"licence_name"`
	MayStoreRaw             bool    `json:"may_store_raw"`
	MayRedistributeVerbatim bool    `json:"may_redistribute_verbatim"`
	MayRedistributeDerived  bool    `json:"may_redistribute_derived"`
	AttributionRequired     *string `json:"attribution_required"`
	LicenceDeterminedBy     string  `json:"licence_determined_by,omitempty"`
	LicenceDeterminedAt     string  `json:"licence_determined_at,omitempty"`
	LicenceReviewDueAt      string  `json:"licence_review_due_at,omitempty"`
	Tenant                  string  `json:"tenant,omitempty"`
	Covers                  *Covers `json:"covers,omitempty"`
}

// IsEnabled reports whether the source is enabled; a source that does not say
// is enabled.
func (s *Source) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Redistributable reports whether claims from this source may be shown: its
// licence permits verbatim or derived redistribution.
func (s *Source) Redistributable() bool {
	return s.MayRedistributeVerbatim || s.MayRedistributeDerived
}

// VisibleTo reports whether a caller of the given tenant may see the source.
func (s *Source) VisibleTo(tenant string) bool {
	return s.Tenant == "" || s.Tenant == tenant
}

// Party operates sources.
type Party struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	GLN  string `json:"gln,omitempty"`
}

// Operator is the short form of a party in a source descriptor.
type Operator struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// SourceDescriptor is the data of the source endpoint: the Source fields plus
// its operator.
type SourceDescriptor struct {
	Source
	Operator *Operator `json:"operator"`
}
