package ingest

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/domain/gs1"
)

// reject is why one input line was refused; err, when set, is instead a
// failure that is no line's fault (a read of the base that failed), which
// fails the build (failed).
type reject struct {
	reason string
	err    error
}

func (r *reject) Error() string { return r.reason }

func rejectf(format string, args ...any) *reject {
	return &reject{reason: fmt.Sprintf(format, args...)}
}

// failed is the reject of an applyFunc that could not judge its line: the
// build fails with err.
func failed(err error) *reject { return &reject{reason: err.Error(), err: err} }

func checkUUID(field, v string) *reject {
	if v == "" {
		return rejectf("%s is required", field)
	}
	if _, err := uuid.Parse(v); err != nil || len(v) != 36 {
		return rejectf("%s %q is not a UUID", field, v)
	}
	return nil
}

func checkTime(field, v string, required bool) *reject {
	if v == "" {
		if required {
			return rejectf("%s is required", field)
		}
		return nil
	}
	if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
		return rejectf("%s %q is not an RFC 3339 date-time", field, v)
	}
	return nil
}

func parseTime(v string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, v)
	return t
}

func checkEnum(field, v string, allowed []string) *reject {
	if v == "" {
		return rejectf("%s is required", field)
	}
	if !slices.Contains(allowed, v) {
		return rejectf("%s %q is not one of %s", field, v, strings.Join(allowed, ", "))
	}
	return nil
}

func checkContentHash(field, v string) *reject {
	hexPart, ok := strings.CutPrefix(v, "sha256:")
	if !ok || len(hexPart) != 64 {
		return rejectf("%s %q is not \"sha256:\" followed by 64 hex digits", field, v)
	}
	if _, err := hex.DecodeString(hexPart); err != nil {
		return rejectf("%s %q is not \"sha256:\" followed by 64 hex digits", field, v)
	}
	return nil
}

// canonicalSubject reads a subject string and returns its canonical form.
func canonicalSubject(field, v string) (string, *reject) {
	if v == "" {
		return "", rejectf("%s is required", field)
	}
	s, err := gs1.ParseSubject(v)
	if err != nil {
		return "", rejectf("%s %q: %v", field, v, err)
	}
	return s.String(), nil
}

var namespaces = []string{gs1.NSGTIN, gs1.NSGLN, gs1.NSSSCC, gs1.NSInternalSKU}

func checkParty(p *domain.Party) *reject {
	if r := checkUUID("id", p.ID); r != nil {
		return r
	}
	if p.Name == "" {
		return rejectf("name is required")
	}
	if p.GLN != "" {
		if _, r := canonicalSubject("gln", "gln:"+p.GLN); r != nil {
			return r
		}
	}
	return nil
}

func checkSource(s *domain.Source, parties map[string]*domain.Party) *reject {
	if r := checkUUID("id", s.ID); r != nil {
		return r
	}
	if r := checkEnum("kind", s.Kind, domain.SourceKinds); r != nil {
		return r
	}
	if s.Origin == "" {
		return rejectf("origin is required")
	}
	if s.TrustTier < 0 || s.TrustTier > domain.MaxTrustTier {
		return rejectf("trust_tier %d is outside 0 to %d", s.TrustTier, domain.MaxTrustTier)
	}
	if s.LicenceName == "" {
		return rejectf("licence_name is required")
	}
	if s.OperatorPartyID != nil {
		if r := checkUUID("operator_party_id", *s.OperatorPartyID); r != nil {
			return r
		}
		if parties[*s.OperatorPartyID] == nil {
			return rejectf("operator_party_id %s names no party in %s", *s.OperatorPartyID, FileParties)
		}
	}
	if s.Kind == domain.SourceKindTenantUpload && s.Tenant == "" {
		return rejectf("a tenant_upload source needs tenant")
	}
	if s.Kind != domain.SourceKindTenantUpload && s.Tenant != "" {
		return rejectf("tenant is only for tenant_upload sources")
	}
	for _, f := range []struct{ name, v string }{
		{"licence_determined_at", s.LicenceDeterminedAt}, {"licence_review_due_at", s.LicenceReviewDueAt},
	} {
		if r := checkTime(f.name, f.v, false); r != nil {
			return r
		}
	}
	if s.Covers != nil {
		for _, ns := range s.Covers.Namespaces {
			if !slices.Contains(namespaces, ns) {
				return rejectf("covers.namespaces: %q is not one of %s", ns, strings.Join(namespaces, ", "))
			}
		}
		for _, p := range s.Covers.GTINPrefixes {
			if p == "" || len(p) > 14 || strings.Trim(p, "0123456789") != "" {
				return rejectf("covers.gtin_prefixes: %q is not a prefix of a 14-digit GTIN", p)
			}
		}
	}
	return nil
}

// checkProduct validates a product and canonicalises its identifiers.
func checkProduct(p *domain.Product) *reject {
	if len(p.Identifiers) == 0 {
		return rejectf("identifiers is required (at least one subject string)")
	}
	seen := map[string]bool{}
	for i, id := range p.Identifiers {
		c, r := canonicalSubject(fmt.Sprintf("identifiers[%d]", i), id)
		if r != nil {
			return r
		}
		if seen[c] {
			return rejectf("identifiers lists %s twice", c)
		}
		seen[c] = true
		p.Identifiers[i] = c
	}
	if p.Manufacturer == "" {
		return rejectf("manufacturer is required")
	}
	if p.ManufacturerGLN != "" {
		if _, r := canonicalSubject("manufacturer_gln", "gln:"+strings.TrimPrefix(p.ManufacturerGLN, "gln:")); r != nil {
			return r
		}
	}
	if r := checkEnum("trust_level", p.TrustLevel, domain.TrustLevels); r != nil {
		return r
	}
	if p.Status == "" {
		return rejectf("status is required")
	}
	return checkTime("updated_at", p.UpdatedAt, true)
}

// checkClaim validates what can be judged from the line alone and normalises
// the claim type and subject.
func checkClaim(c *domain.Claim, sources map[string]*domain.Source) *reject {
	if c.ID == "" {
		return rejectf("id is required")
	}
	subj, r := canonicalSubject("subject", c.Subject)
	if r != nil {
		return r
	}
	c.Subject = subj
	if c.Predicate == "" {
		return rejectf("predicate is required")
	}
	if len(c.Object.Value) == 0 {
		return rejectf("object.value is required")
	}
	t, ok := domain.NormalizeClaimType(c.ClaimType)
	if !ok {
		if c.ClaimType == "" {
			return rejectf("claim_type is required")
		}
		return rejectf("claim_type %q is not one of %s", c.ClaimType, strings.Join(domain.ClaimTypes, ", "))
	}
	c.ClaimType = t
	if domain.NeedsMethod(t) && domain.Str(c.Method) == "" {
		return rejectf("claim_type %s needs a method", t)
	}
	if c.VerificationStatus != "" {
		if r := checkEnum("verification_status", c.VerificationStatus, domain.VerificationStatuses); r != nil {
			return r
		}
	}
	if r := checkEnum("trust_level", c.TrustLevel, domain.TrustLevels); r != nil {
		return r
	}
	if c.Confidence != nil && (*c.Confidence > 1 || *c.Confidence < 0) {
		return rejectf("confidence %v is outside 0 to 1", *c.Confidence)
	}
	if r := checkTime("published_at", domain.Str(c.PublishedAt), false); r != nil {
		return r
	}
	if r := checkTime("retrieved_at", c.RetrievedAt, true); r != nil {
		return r
	}
	if c.SourceRef != nil {
		if sources[*c.SourceRef] == nil {
			return rejectf("source_ref %s names no source in %s", *c.SourceRef, FileSources)
		}
	}
	if c.SupersededBy != nil && (*c.SupersededBy == "" || *c.SupersededBy == c.ID) {
		return rejectf("superseded_by must name another claim")
	}
	return nil
}

func checkDocument(d *domain.Document, sources map[string]*domain.Source) *reject {
	if d.ID == "" {
		return rejectf("id is required")
	}
	if d.SourceID == "" {
		return rejectf("source_id is required")
	}
	if sources[d.SourceID] == nil {
		return rejectf("source_id %s names no source in %s", d.SourceID, FileSources)
	}
	if d.MediaType == "" {
		return rejectf("media_type is required")
	}
	if r := checkContentHash("content_hash", d.ContentHash); r != nil {
		return r
	}
	if d.URL != nil && *d.URL != "" && !domain.IsWebURL(*d.URL) {
		return rejectf("url %q is not an absolute http or https URL; leave url out when the document has none", *d.URL)
	}
	if d.Size < 0 {
		return rejectf("size %d is negative", d.Size)
	}
	return checkTime("retrieved_at", d.RetrievedAt, true)
}

func checkEvidence(e *domain.Evidence) *reject {
	if e.ID == "" {
		return rejectf("id is required")
	}
	if e.ClaimID == "" {
		return rejectf("claim_id is required")
	}
	if e.DocumentID == "" {
		return rejectf("document_id is required")
	}
	l := &e.Locator
	switch l.Kind {
	case domain.LocatorContentHash:
		if r := checkContentHash("locator.content_hash", l.ContentHash); r != nil {
			return r
		}
		l.Start, l.End, l.Pointer = nil, nil, ""
	case domain.LocatorByteRange:
		if l.Start == nil || l.End == nil {
			return rejectf("a byte_range locator needs start and end")
		}
		if *l.Start < 0 || *l.End <= *l.Start {
			return rejectf("byte_range %d-%d is not a range (0 <= start < end)", *l.Start, *l.End)
		}
		l.ContentHash, l.Pointer = "", ""
	case domain.LocatorJSONPointer:
		if l.Pointer != "" && !strings.HasPrefix(l.Pointer, "/") {
			return rejectf("json_pointer %q is not an RFC 6901 pointer", l.Pointer)
		}
		l.ContentHash, l.Start, l.End = "", nil, nil
	case "":
		return rejectf("locator.kind is required")
	default:
		return rejectf("locator.kind %q is not one of content_hash, byte_range, json_pointer", l.Kind)
	}
	return nil
}

func checkVerdict(v *domain.Verdict) *reject {
	subj, r := canonicalSubject("subject", v.Subject)
	if r != nil {
		return r
	}
	v.Subject = subj
	values, ok := domain.VerdictValues[v.Class]
	if !ok {
		if v.Class == "" {
			return rejectf("class is required")
		}
		return rejectf("class %q is not one of technical, business, regulatory, authority", v.Class)
	}
	if r := checkEnum("value", v.Value, values); r != nil {
		return rejectf("%s (class %s)", r.reason, v.Class)
	}
	return checkTime("evaluated_at", v.EvaluatedAt, true)
}
