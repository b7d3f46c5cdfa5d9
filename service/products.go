package service

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/domain/gs1"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/service/keys"
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
	reading    gs1.Reading        // the reading that found it, or that the absence is about
	candidates []domain.Candidate // when ambiguous
	coverage   *domain.Coverage   // on absence
}

// find looks up what the readings of an identifier name for tenant. When
// exactly one reading finds a product visible to tenant, that is the
// answer; several distinct products are ambiguous; none is an absence
// about the first reading in a product namespace (or, without one, the
// first reading, out of scope).
func (snap *Snapshot) find(readings []gs1.Reading, tenant string) (lookup, error) {
	var hits []lookup
	for _, r := range readings {
		a, ok, err := snap.Alias(r.Subject.String())
		if err != nil {
			return lookup{}, err
		}
		if ok && a.VisibleTo(tenant) {
			dup := false
			for _, h := range hits {
				dup = dup || h.alias.Subject == a.Subject
			}
			if !dup {
				hits = append(hits, lookup{status: domain.StatusFound, alias: a, reading: r})
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
			ns, v, _ := cut(h.alias.Subject)
			l.candidates = append(l.candidates, domain.Candidate{Namespace: ns, Valid: true, Normalized: v, Subject: h.alias.Subject})
		}
		return l, nil
	}
	for _, r := range readings {
		if isProductNamespace(r.Subject.Namespace) {
			cov := domain.CoverageOf(r.Subject.String(), tenant, snap.sources)
			status, reason := cov.Absence()
			return lookup{status: status, reason: reason, reading: r, coverage: &cov}, nil
		}
	}
	return lookup{status: domain.StatusUnknown, reason: domain.ReasonOutOfScope, reading: readings[0],
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
func (s *Service) Identity(ctx context.Context, c domain.Caller, a ProductArgs) (*Result, error) {
	return s.product(ctx, c, ViewIdentity, a)
}

// Passport answers a product's passport.
func (s *Service) Passport(ctx context.Context, c domain.Caller, a ProductArgs) (*Result, error) {
	return s.product(ctx, c, ViewPassport, a)
}

// Evidence answers the evidence chains of a product's passport claims.
func (s *Service) Evidence(ctx context.Context, c domain.Caller, a ProductArgs) (*Result, error) {
	return s.product(ctx, c, ViewEvidence, a)
}

// product answers one view of the product a.Identifier names.
func (s *Service) product(ctx context.Context, c domain.Caller, view View, a ProductArgs) (*Result, error) {
	if a.Identifier == nil {
		return nil, domain.Errorf(domain.CodeInvalidRequest, "the member 'identifier' (string) is required")
	}
	identifier := *a.Identifier
	if err := s.authorize(ctx, c, view.op(), keys.ScopeRead, 1); err != nil {
		return nil, err
	}
	readings, err := gs1.Interpret(identifier)
	if err != nil {
		return nil, s.invalidIdentifier(identifier, c.Tenant, err)
	}
	snap, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.release()
	buf := viewBufs.Get().(*[]byte)
	res, err := snap.product(view, identifier, readings, c.Tenant, buf)
	if res == nil || res.buf != buf {
		putViewBuf(buf) // nothing the answer holds is in it
	}
	return res, err
}

// product answers view of what readings of identifier name for tenant,
// reading a stored view into buf (the answer then holds buf, see
// Result.Release).
func (snap *Snapshot) product(view View, identifier string, readings []gs1.Reading, tenant string, buf *[]byte) (*Result, error) {
	if len(readings) == 1 {
		subject := readings[0].Subject.String()
		v, ok, err := snap.direct(view, subject, tenant, buf)
		if err != nil {
			return nil, err
		}
		if ok {
			return snap.stamped(viewResult(view, v, buf, identifier, readings[0], subject, subject))
		}
	}
	l, err := snap.find(readings, tenant)
	if err != nil {
		return nil, err
	}
	if l.status != domain.StatusFound {
		return snap.stamped(l.absence(identifier))
	}
	v, ok, err := snap.readView(view, l.alias.Subject, l.alias.ViewTenant(tenant), buf)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, domain.Internal(errMissingView(l.alias.Subject))
	}
	return snap.stamped(viewResult(view, v, buf, identifier, l.reading, l.reading.Subject.String(), l.alias.Subject))
}

// viewResult answers a stored view of product (read by readView into buf,
// which the answer holds), found through reading of input, whose subject
// string is looked. A found answer read as written is the stored view as it
// is; otherwise data.interpreted_as echoes the subject looked up and the
// reading's warnings follow the stored ones. A passport or evidence view
// that is an absence (a known product with no passport, or whose claims
// are all withheld) gets the data of every absence, with has_product.
func viewResult(view View, v kv.View, buf *[]byte, input string, reading gs1.Reading, looked, product string) (*Result, error) {
	body := v.Body
	res := &Result{Body: body, buf: buf}
	if view != ViewIdentity {
		res.Coverage = v.Coverage
	}
	found := bytes.HasPrefix(body, []byte(identityPrefix))
	if found && input == looked && len(reading.Warnings) == 0 {
		return res, nil
	}
	var setData func(json.RawMessage) (json.RawMessage, error)
	if found {
		setData = func(data json.RawMessage) (json.RawMessage, error) {
			return prependMember(data, "interpreted_as", looked)
		}
	} else {
		setData = func(json.RawMessage) (json.RawMessage, error) {
			return domain.Marshal(domain.Absence{Input: input, InterpretedAs: looked, HasProduct: true, Subject: product})
		}
	}
	edited, err := editBody(body, setData, warnings(reading.Warnings))
	if err != nil {
		return nil, domain.Internal(err)
	}
	res.Body = edited
	return res, nil
}

// direct is the fast path for a subject that is a product's canonical
// subject: its public view is read without the alias. ok is false when the
// subject needs the full lookup (a linked identifier, a private product, or
// nothing stored).
func (snap *Snapshot) direct(view View, subject, tenant string, buf *[]byte) (kv.View, bool, error) {
	v, ok, err := snap.readView(view, subject, "", buf)
	if err != nil || !ok {
		return kv.View{}, false, err
	}
	if tenant == "" || !v.HasTenant(tenant) {
		return v, true, nil
	}
	return snap.readView(view, subject, tenant, buf)
}

// readView reads the view of subject for tenant into *buf (over what it
// held) and decodes it. An identity view's Body comes back with
// identityPrefix before it, in the same buffer: the value is read past room
// for the prefix, and once it is decoded (its tenants copied out) the
// prefix is written over the bytes just before the body, so that the
// answer needs no copy of its own.
func (snap *Snapshot) readView(view View, subject, tenant string, buf *[]byte) (kv.View, bool, error) {
	pad := 0
	if view == ViewIdentity {
		pad = len(identityPrefix)
	}
	raw, ok, err := snap.View(byte(view), subject, tenant, append((*buf)[:0], identityPrefix[:pad]...))
	*buf = raw[:0]
	if err != nil || !ok {
		return kv.View{}, false, err
	}
	v, err := kv.DecodeView(raw[pad:])
	if err != nil {
		return kv.View{}, false, domain.Internal(err)
	}
	if pad > 0 {
		at := len(raw) - len(v.Coverage) - len(v.Body) // where the body starts, at least pad
		copy(raw[at-pad:at], identityPrefix)
		v.Body = raw[at-pad : at+len(v.Body)]
	}
	return v, true, nil
}

// identityPrefix precedes the stored identity data in the envelope.
const identityPrefix = `"status":"found","data":`

// absence answers a lookup that found nothing (or several things): an
// absence echoes the input and the subject it was read as, with the
// reading's warnings.
func (l lookup) absence(input string) (*Result, error) {
	b := domain.Body{Status: l.status, Reason: l.reason}
	if l.status == domain.StatusAmbiguous {
		b.Reason = ""
		b.Data = map[string]any{"input": input, "candidates": l.candidates}
		b.Warnings = []domain.Warning{{Code: "AMBIGUOUS_IDENTIFIER", Severity: domain.SeverityWarn,
			Detail: "the value names stored records in several namespaces; ask again with one of the candidate subjects"}}
	} else {
		b.Data = domain.Absence{Input: input, InterpretedAs: l.reading.Subject.String()}
		if len(l.reading.Warnings) > 0 {
			b.Warnings = warnings(l.reading.Warnings)
		}
	}
	return bodyResult(b, l.coverage)
}

// invalidIdentifier is the error of an identifier that fails syntax (err,
// from gs1.Interpret). When the caller can see a product stored under the
// value as an internal SKU (see storedSKU), the detail names it: the value is
// still invalid, but the caller learns what to ask for.
func (s *Service) invalidIdentifier(input, tenant string, err error) error {
	de := fromGS1(err, domain.CodeInvalidIdentifier).(*domain.Error)
	if de.Code != domain.CodeInvalidIdentifier {
		return de
	}
	snap, serr := s.snapshot()
	if serr != nil {
		return de // the caller hears about its identifier first
	}
	defer snap.release()
	sku, ok, serr := snap.storedSKU(input, tenant)
	if serr != nil || !ok {
		return de
	}
	return &domain.Error{Code: de.Code, Detail: de.Detail + skuHint(sku)}
}

// skuHint is what an INVALID_IDENTIFIER detail adds when a product is
// stored under the value as the internal SKU sku.
func skuHint(sku string) string {
	return "; a product is stored under this code as " + sku + ": ask for that subject"
}

// storedSKU finds a product stored as an internal SKU under a value that
// fails GS1 syntax: the value as it is or behind one of
// domain.CodeSKUPrefixes (pds import off keeps a code with a wrong check
// digit as internal_sku:off-<code>). The value is the input without white
// space around it and without a gtin, gln or sscc namespace; sku is the
// subject to ask for, when the caller may see its product.
func (snap *Snapshot) storedSKU(input, tenant string) (sku string, ok bool, err error) {
	v := strings.TrimSpace(input)
	if ns, rest, found := cut(v); found {
		if ns != gs1.NSGTIN && ns != gs1.NSGLN && ns != gs1.NSSSCC {
			return "", false, nil
		}
		v = rest
	}
	for _, prefix := range domain.CodeSKUPrefixes {
		sub, perr := gs1.ParseSubject(gs1.NSInternalSKU + ":" + prefix + v)
		if perr != nil {
			continue
		}
		a, found, err := snap.Alias(sub.String())
		if err != nil {
			return "", false, err
		}
		if found && a.VisibleTo(tenant) {
			return sub.String(), true, nil
		}
	}
	return "", false, nil
}

type errMissingView string

func (e errMissingView) Error() string { return "snapshot has no view for " + string(e) }
