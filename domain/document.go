package domain

import "net/url"

// Document is a retrieved document that claims were read from.
type Document struct {
	ID          string  `json:"id"`
	SourceID    string  `json:"source_id"`
	MediaType   string  `json:"media_type"`
	URL         *string `json:"url"`
	ContentHash string  `json:"content_hash"`
	Size        int64   `json:"size"`
	RetrievedAt string  `json:"retrieved_at"`
}

// IsWebURL reports whether s is an absolute http or https URL with a host
// (the scheme in either case). A document's url must be one: a passport
// page links it, and a javascript: or data: URL there would run, or show,
// what the input chose.
func IsWebURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Locator kinds of an evidence link.
const (
	LocatorContentHash = "content_hash"
	LocatorByteRange   = "byte_range"
	LocatorJSONPointer = "json_pointer"
)

// Locator points into a document.
type Locator struct {
	Kind        string `json:"kind"`
	ContentHash string `json:"content_hash,omitempty"`
	Start       *int64 `json:"start,omitempty"`
	End         *int64 `json:"end,omitempty"`
	Pointer     string `json:"pointer,omitempty"`
}

// Evidence links a claim to the document it came from (an input line of
// evidence.ndjson).
type Evidence struct {
	ID         string  `json:"id"`
	ClaimID    string  `json:"claim_id"`
	DocumentID string  `json:"document_id"`
	Locator    Locator `json:"locator"`
}

// EvidenceLink is one link of an evidence chain as served.
type EvidenceLink struct {
	ID       string     `json:"id"`
	Locator  Locator    `json:"locator"`
	Document Document   `json:"document"`
	Source   LinkSource `json:"source"`
}

// Chain is a current claim with its evidence links.
type Chain struct {
	Claim Claim          `json:"claim"`
	Links []EvidenceLink `json:"links"`
}

// EvidenceData is the data of the evidence endpoint.
type EvidenceData struct {
	Subject string  `json:"subject"`
	Chains  []Chain `json:"chains"`
}
