package domain

// Envelope statuses (spec 2.1).
const (
	StatusFound     = "found"
	StatusNotFound  = "not_found"
	StatusUnknown   = "unknown"
	StatusAmbiguous = "ambiguous"
	StatusPartial   = "partial"
)

// Reasons for StatusUnknown (spec 2.1).
const (
	ReasonNoSource          = "NO_SOURCE"
	ReasonSourceUnavailable = "SOURCE_UNAVAILABLE"
	ReasonOutOfScope        = "OUT_OF_SCOPE"
	ReasonLicenceRestricted = "LICENCE_RESTRICTED"
	ReasonTimeout           = "TIMEOUT"
	ReasonAmbiguousInput    = "AMBIGUOUS_INPUT"
)

// Reasons a source was skipped (spec 2.4).
const (
	SkipLicenceRestricted = "LICENCE_RESTRICTED"
	SkipCircuitOpen       = "CIRCUIT_OPEN"
	SkipOutOfScope        = "OUT_OF_SCOPE"
	SkipTimeout           = "TIMEOUT"
	SkipDisabled          = "DISABLED"
)

// Warning severities.
const (
	SeverityInfo  = "info"
	SeverityWarn  = "warn"
	SeverityError = "error"
)

// Warning is an envelope warning (spec 2.6).
type Warning struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Detail   string `json:"detail,omitempty"`
}

// Skipped is a source that was not consulted, and why.
type Skipped struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Coverage says what was consulted (spec 2.4).
type Coverage struct {
	SourcesConsulted []string  `json:"sources_consulted"`
	SourcesSkipped   []Skipped `json:"sources_skipped,omitempty"`
}

// Candidate is one reading of an ambiguous identifier.
type Candidate struct {
	Namespace  string `json:"namespace"`
	Valid      bool   `json:"valid"`
	Normalized string `json:"normalized"`
	Subject    string `json:"subject"`
}
