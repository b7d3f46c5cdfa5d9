package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/kv"
)

// EachPublicProduct calls fn with every public product of the snapshot, in
// the order of their canonical subjects, as the API answers a caller
// without a tenant (Public): the stored public identity and passport views,
// the same bytes GET /v1/products/{id} and /dpp answer, so what their
// sources' licences withhold from the API (claims of a source that permits
// neither verbatim nor derived redistribution) is withheld here too, by the
// same rule, applied once at ingest. A private product has no public view
// and is left out; so is every claim and source of a tenant_upload source.
//
// It streams: one product at a time is decoded, and p is reused between
// calls (copy what must outlive the call). It stops at the first error fn
// returns, or when ctx is done.
func (snap *Snapshot) EachPublicProduct(ctx context.Context, fn func(p *domain.PublicProduct) error) error {
	var (
		p        domain.PublicProduct
		idBuf    []byte
		passport []byte
		n        int
	)
	return snap.Scan(kv.TagPassport, func(key, value []byte) error {
		subject, tenant, ok := bytes.Cut(key, []byte{0})
		if !ok || len(tenant) > 0 {
			return nil // a tenant's own view of a product; the public one came first
		}
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		raw, found, err := snap.View(kv.TagIdentity, string(subject), "", idBuf[:0])
		idBuf = raw
		if err != nil {
			return err
		}
		if !found {
			return domain.Internal(errMissingView(string(subject)))
		}
		idView, err := kv.DecodeView(raw)
		if err != nil {
			return domain.Internal(fmt.Errorf("identity view of %s: %w", subject, err))
		}
		pView, err := kv.DecodeView(value)
		if err != nil {
			return domain.Internal(fmt.Errorf("passport view of %s: %w", subject, err))
		}
		passport = append(append(append(passport[:0], '{'), pView.Body...), '}')
		if err := decodePublicProduct(&p, idView.Body, passport, pView.Coverage); err != nil {
			return domain.Internal(fmt.Errorf("views of %s: %w", subject, err))
		}
		return fn(&p)
	})
}

// passportBody is what a stored passport view holds that an export needs;
// the claims and warnings are skipped.
type passportBody struct {
	Status     string             `json:"status"`
	Reason     string             `json:"reason"`
	Data       json.RawMessage    `json:"data"`
	Sources    []domain.Source    `json:"sources"`
	Validation *domain.Validation `json:"validation"`
}

// decodePublicProduct fills p from an identity view's data, a passport
// view's body (in braces) and its coverage.
func decodePublicProduct(p *domain.PublicProduct, identity, passport, coverage []byte) error {
	*p = domain.PublicProduct{}
	if err := json.Unmarshal(identity, &p.Identity); err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	var b passportBody
	if err := json.Unmarshal(passport, &b); err != nil {
		return fmt.Errorf("passport: %w", err)
	}
	p.Passport = domain.PassportAnswer{Status: b.Status, Reason: b.Reason, Sources: b.Sources, Validation: b.Validation}
	if b.Status == domain.StatusFound {
		p.Passport.Data = new(domain.PassportData)
		if err := json.Unmarshal(b.Data, p.Passport.Data); err != nil {
			return fmt.Errorf("passport data: %w", err)
		}
	}
	if len(coverage) > 0 {
		if err := json.Unmarshal(coverage, &p.Passport.Coverage); err != nil {
			return fmt.Errorf("coverage: %w", err)
		}
	}
	return nil
}
