package service

import (
	"context"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/gs1"
	"github.com/productdata/pds/keys"
	"github.com/productdata/pds/kv"
)

// View names a per-product answer.
type View byte

// The product views.
const (
	ViewIdentity = View(kv.TagIdentity)
	ViewPassport = View(kv.TagPassport)
	ViewEvidence = View(kv.TagEvidence)
)

func (v View) op() string {
	switch v {
	case ViewPassport:
		return "get_passport"
	case ViewEvidence:
		return "get_evidence"
	}
	return "get_product"
}

// isProductNamespace reports whether products are identified in ns.
func isProductNamespace(ns string) bool { return ns == gs1.NSGTIN || ns == gs1.NSInternalSKU }

// lookup is what an identifier names for one caller.
type lookup struct {
	status     string // found, not_found, unknown, ambiguous
	reason     string
	alias      kv.Alias
	subject    string             // the canonical subject, when known
	candidates []domain.Candidate // when ambiguous
	coverage   *domain.Coverage   // on absence
}

// find reads an identifier (a subject string or a bare value) and looks up
// what it names for tenant.
func (snap *Snapshot) find(identifier, tenant string) (lookup, error) {
	subjects, err := gs1.Identify(identifier)
	if err != nil {
		return lookup{}, fromGS1(err, domain.CodeInvalidIdentifier)
	}
	var hits []lookup
	for _, s := range subjects {
		a, ok, err := snap.store.Alias(s.String())
		if err != nil {
			return lookup{}, err
		}
		if ok && a.VisibleTo(tenant) {
			dup := false
			for _, h := range hits {
				dup = dup || h.alias.Subject == a.Subject
			}
			if !dup {
				hits = append(hits, lookup{status: domain.StatusFound, alias: a, subject: a.Subject})
			}
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
	default:
		l := lookup{status: domain.StatusAmbiguous}
		for _, h := range hits {
			ns, v, _ := cut(h.subject)
			l.candidates = append(l.candidates, domain.Candidate{Namespace: ns, Valid: true, Normalized: v, Subject: h.subject})
		}
		return l, nil
	}
	for _, s := range subjects {
		if isProductNamespace(s.Namespace) {
			cov := domain.CoverageOf(s.String(), tenant, snap.sources)
			status, reason := cov.Absence()
			return lookup{status: status, reason: reason, subject: s.String(), coverage: &cov}, nil
		}
	}
	return lookup{status: domain.StatusUnknown, reason: domain.ReasonOutOfScope, subject: subjects[0].String(),
		coverage: &domain.Coverage{SourcesConsulted: []string{}}}, nil
}

func cut(subject string) (ns, value string, ok bool) {
	for i := 0; i < len(subject); i++ {
		if subject[i] == ':' {
			return subject[:i], subject[i+1:], true
		}
	}
	return "", subject, false
}

// ProductArgs are the arguments of Identity, Passport and Evidence.
type ProductArgs struct {
	Identifier *string `json:"identifier"`
}

// Identity answers a product's identity.
func (s *Service) Identity(ctx context.Context, c Caller, a ProductArgs) (*Result, error) {
	return s.product(ctx, c, ViewIdentity, a)
}

// Passport answers a product's passport.
func (s *Service) Passport(ctx context.Context, c Caller, a ProductArgs) (*Result, error) {
	return s.product(ctx, c, ViewPassport, a)
}

// Evidence answers the evidence chains of a product's passport claims.
func (s *Service) Evidence(ctx context.Context, c Caller, a ProductArgs) (*Result, error) {
	return s.product(ctx, c, ViewEvidence, a)
}

// product answers one view of the product a.Identifier names.
func (s *Service) product(ctx context.Context, c Caller, view View, a ProductArgs) (*Result, error) {
	if a.Identifier == nil {
		return nil, domain.Errorf(domain.CodeInvalidRequest, "the member 'identifier' (string) is required")
	}
	identifier := *a.Identifier
	if err := s.authorize(ctx, c, view.op(), keys.ScopeRead, 1); err != nil {
		return nil, err
	}
	snap, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.release()
	v, ok, err := snap.direct(view, identifier, c.Tenant)
	if err != nil {
		return nil, err
	}
	if ok {
		return snap.stamped(viewResult(view, v), nil)
	}
	l, err := snap.find(identifier, c.Tenant)
	if err != nil {
		return nil, err
	}
	if l.status != domain.StatusFound {
		return snap.stamped(l.absence(identifier))
	}
	raw, ok, err := snap.store.View(byte(view), l.alias.Subject, l.alias.ViewTenant(c.Tenant), nil)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, domain.Internal(errMissingView(l.alias.Subject))
	}
	v, err = kv.DecodeView(raw)
	if err != nil {
		return nil, domain.Internal(err)
	}
	return snap.stamped(viewResult(view, v), nil)
}

func viewResult(view View, v kv.View) *Result {
	if view == ViewIdentity {
		body := make([]byte, 0, len(identityPrefix)+len(v.Body))
		body = append(append(body, identityPrefix...), v.Body...)
		return &Result{Body: body}
	}
	return &Result{Body: v.Body, Coverage: v.Coverage}
}

// direct is the fast path for an identifier that is a product's canonical
// subject: its public view is read without the alias. ok is false when the
// identifier needs the full lookup (a linked identifier, a private product,
// an ambiguous bare value, or nothing stored).
func (snap *Snapshot) direct(view View, identifier, tenant string) (kv.View, bool, error) {
	subjects, err := gs1.Identify(identifier)
	if err != nil || len(subjects) != 1 {
		return kv.View{}, false, nil
	}
	subject := subjects[0].String()
	raw, ok, err := snap.store.View(byte(view), subject, "", nil)
	if err != nil || !ok {
		return kv.View{}, false, err
	}
	v, err := kv.DecodeView(raw)
	if err != nil {
		return kv.View{}, false, domain.Internal(err)
	}
	if tenant == "" || !v.HasTenant(tenant) {
		return v, true, nil
	}
	if raw, ok, err = snap.store.View(byte(view), subject, tenant, nil); err != nil || !ok {
		return kv.View{}, false, err
	}
	v, err = kv.DecodeView(raw)
	if err != nil {
		return kv.View{}, false, domain.Internal(err)
	}
	return v, true, nil
}

// identityPrefix precedes the stored identity data in the envelope.
const identityPrefix = `"status":"found","data":`

// absence answers a lookup that found nothing (or several things).
func (l lookup) absence(input string) (*Result, error) {
	b := domain.Body{Status: l.status, Reason: l.reason}
	if l.status == domain.StatusAmbiguous {
		b.Reason = ""
		b.Data = map[string]any{"input": input, "candidates": l.candidates}
		b.Warnings = []domain.Warning{{Code: "AMBIGUOUS_IDENTIFIER", Severity: domain.SeverityWarn,
			Detail: "the value names stored records in several namespaces; ask again with one of the candidate subjects"}}
	}
	return bodyResult(b, l.coverage)
}

type errMissingView string

func (e errMissingView) Error() string { return "snapshot has no view for " + string(e) }
