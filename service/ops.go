package service

import (
	"context"
	"errors"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/domain/gs1"
	"github.com/productdata/pds/service/keys"
)

// fromGS1 turns a gs1 error into a domain error; anything else gets code.
func fromGS1(err error, code string) error {
	var ge *gs1.Error
	if errors.As(err, &ge) {
		return &domain.Error{Code: ge.Code, Detail: ge.Detail}
	}
	return &domain.Error{Code: code, Detail: err.Error()}
}

// WhoamiArgs are the arguments of Whoami: none.
type WhoamiArgs struct{}

// Whoami says which tenant and scopes the caller's key resolves to, and
// where it stands against its quota and rate limit. It is neither billed nor
// quota-checked, and takes no rate token.
func (s *Service) Whoami(_ context.Context, c domain.Caller, _ WhoamiArgs) (*Result, error) {
	scopes := c.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return bodyResult(domain.Body{Status: domain.StatusFound, Data: map[string]any{
		"tenant": c.Tenant, "scopes": scopes, "key_id": c.KeyID, "limits": s.Usage(c),
	}}, nil)
}

// ValidateArgs are the arguments of Validate.
type ValidateArgs struct {
	Namespace *string `json:"namespace"`
	Value     *string `json:"value"`
}

// MaxValueLength is the longest value Validate judges, in characters.
const MaxValueLength = 256

// Validate judges an identifier's syntax. It never reads the snapshot.
func (s *Service) Validate(ctx context.Context, c domain.Caller, a ValidateArgs) (*Result, error) {
	if err := s.authorize(ctx, c, "validate_identifier", keys.ScopeValidate, 1); err != nil {
		return nil, err
	}
	if a.Value == nil {
		return nil, domain.Errorf(domain.CodeInvalidRequest, "the member 'value' (string) is required")
	}
	if n := utf8.RuneCountInString(*a.Value); n > MaxValueLength {
		return nil, domain.Errorf(domain.CodeInvalidRequest, "'value' has %d characters; at most %d are allowed", n, MaxValueLength)
	}
	ns := gs1.NSAuto
	if a.Namespace != nil {
		ns = *a.Namespace
	}
	rep, err := gs1.Validate(ns, *a.Value)
	if err != nil {
		return nil, fromGS1(err, domain.CodeUnsupportedNamespace)
	}
	b := domain.Body{Status: domain.StatusFound, Data: rep.Data, Warnings: warnings(rep.Warnings)}
	if rep.Ambiguous {
		b.Status = domain.StatusAmbiguous
	} else {
		b.Validation = &domain.Validation{Technical: rep.Technical}
	}
	return bodyResult(b, nil)
}

func warnings(ws []gs1.Warning) []domain.Warning {
	out := make([]domain.Warning, 0, len(ws))
	for _, w := range ws {
		out = append(out, domain.Warning{Code: w.Code, Severity: w.Severity, Detail: w.Detail})
	}
	return out
}

// ParseArgs are the arguments of ParseDigitalLink.
type ParseArgs struct {
	URI *string `json:"uri"`
}

// ParseDigitalLink parses a GS1 Digital Link URI. Syntax only: nothing is
// fetched and the snapshot is not read.
func (s *Service) ParseDigitalLink(ctx context.Context, c domain.Caller, a ParseArgs) (*Result, error) {
	if err := s.authorize(ctx, c, "parse_digital_link", keys.ScopeParse, 1); err != nil {
		return nil, err
	}
	if a.URI == nil {
		return nil, domain.Errorf(domain.CodeInvalidRequest, "the member 'uri' (string) is required")
	}
	link, err := gs1.ParseDigitalLink(*a.URI)
	if err != nil {
		return nil, fromGS1(err, domain.CodeMalformedURI)
	}
	return bodyResult(domain.Body{Status: domain.StatusFound, Data: link, Warnings: warnings(link.Warnings)}, nil)
}

// SourceArgs are the arguments of Source.
type SourceArgs struct {
	SourceID *string `json:"source_id"`
}

// Source describes a source and its licence.
func (s *Service) Source(ctx context.Context, c domain.Caller, a SourceArgs) (*Result, error) {
	if a.SourceID == nil {
		return nil, domain.Errorf(domain.CodeInvalidRequest, "the member 'source_id' (string) is required")
	}
	id := *a.SourceID
	if err := s.authorize(ctx, c, "get_source", keys.ScopeSources, 1); err != nil {
		return nil, err
	}
	u, err := uuid.Parse(id)
	if err != nil || len(id) != 36 {
		return nil, domain.Errorf(domain.CodeInvalidIdentifier, "a source id is a UUID such as 0b6c5a2e-3f1d-4c8e-9a7b-2d4e6f8a0c1e")
	}
	snap, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.release()
	d := snap.byID[u.String()]
	if d == nil || !d.VisibleTo(c.Tenant) {
		return snap.stamped(bodyResult(domain.Body{Status: domain.StatusNotFound}, &domain.Coverage{SourcesConsulted: []string{}}))
	}
	served := *d
	served.Source = domain.ServedSource(&d.Source)
	return snap.stamped(bodyResult(domain.Body{Status: domain.StatusFound, Data: served}, nil))
}
