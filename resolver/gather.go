package resolver

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/service"
)

// envelope is an operation's answer as the resolver reads it.
type envelope struct {
	Status     string             `json:"status"`
	Reason     string             `json:"reason"`
	Data       json.RawMessage    `json:"data"`
	Claims     []domain.Claim     `json:"claims"`
	Sources    []domain.Source    `json:"sources"`
	Validation *domain.Validation `json:"validation"`
	Warnings   []domain.Warning   `json:"warnings"`
	coverage   domain.Coverage
	build      string // the snapshot that answered: build id
	created    string // and creation time
}

// decode reads an operation's answer and releases it.
func decode(res *service.Result) (envelope, error) {
	defer res.Release()
	b := make([]byte, 0, len(res.Body)+2)
	b = append(append(append(b, '{'), res.Body...), '}')
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return envelope{}, domain.Internal(err)
	}
	if len(res.Coverage) > 0 {
		if err := json.Unmarshal(res.Coverage, &env.coverage); err != nil {
			return envelope{}, domain.Internal(err)
		}
	}
	if res.Snapshot != nil {
		env.build, env.created = res.Snapshot.BuildID, res.Snapshot.CreatedAt
	}
	return env, nil
}

// identityData is the data of a found identity answer.
type identityData struct {
	Subject         string   `json:"subject"`
	Identifiers     []string `json:"identifiers"`
	TrustLevel      string   `json:"trust_level"`
	Status          string   `json:"status"`
	Manufacturer    string   `json:"manufacturer"`
	ManufacturerGLN string   `json:"manufacturer_gln"`
	Brand           string   `json:"brand"`
	UpdatedAt       string   `json:"updated_at"`
	HasPassport     bool     `json:"has_passport"`
}

// product is everything the service answered the public about one
// identifier, from one snapshot.
type product struct {
	subject  string
	identity envelope
	id       identityData // when identity.Status is found
	passport envelope     // when found
	evidence domain.EvidenceData
	// evidenceBuild is the build the evidence answer came from.
	evidenceBuild string
	// sources are the descriptors (with their operators) of every source
	// the answers name, by id.
	sources map[string]domain.SourceDescriptor
}

func (p *product) found() bool { return p.identity.Status == domain.StatusFound }

// lookup asks the service, as the public, about subject: its identity and,
// when found and full is set, its passport, evidence and sources. The
// answers come from one snapshot: when a swap falls between them, they
// are asked again.
func (h *Handler) lookup(ctx context.Context, subject string, full bool) (*product, error) {
	var p *product
	var err error
	for try := 0; try < 3; try++ {
		if p, err = h.lookupOnce(ctx, subject, full); err != nil || p.consistent() {
			return p, err
		}
	}
	return p, nil
}

// consistent reports whether every answer came from the same build.
func (p *product) consistent() bool {
	b := p.identity.build
	return (p.passport.build == "" || p.passport.build == b) && (p.evidenceBuild == "" || p.evidenceBuild == b)
}

func (h *Handler) lookupOnce(ctx context.Context, subject string, full bool) (*product, error) {
	c := service.Public()
	args := service.ProductArgs{Identifier: &subject}
	p := &product{subject: subject, sources: map[string]domain.SourceDescriptor{}}
	res, err := h.svc.Identity(ctx, c, args)
	if err != nil {
		return nil, err
	}
	if p.identity, err = decode(res); err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, id := range p.identity.coverage.SourcesConsulted {
		ids[id] = true
	}
	for _, s := range p.identity.coverage.SourcesSkipped {
		ids[s.ID] = true
	}
	if p.found() {
		if err := json.Unmarshal(p.identity.Data, &p.id); err != nil {
			return nil, domain.Internal(err)
		}
	}
	if p.found() && full {
		if res, err = h.svc.Passport(ctx, c, args); err != nil {
			return nil, err
		}
		if p.passport, err = decode(res); err != nil {
			return nil, err
		}
		if res, err = h.svc.Evidence(ctx, c, args); err != nil {
			return nil, err
		}
		ev, err := decode(res)
		if err != nil {
			return nil, err
		}
		p.evidenceBuild = ev.build
		if ev.Status == domain.StatusFound {
			if err := json.Unmarshal(ev.Data, &p.evidence); err != nil {
				return nil, domain.Internal(err)
			}
		}
		for _, s := range p.passport.Sources {
			ids[s.ID] = true
		}
		for _, s := range p.passport.coverage.SourcesSkipped {
			ids[s.ID] = true
		}
		for _, ch := range p.evidence.Chains {
			for _, l := range ch.Links {
				ids[l.Source.ID] = true
			}
		}
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	for _, id := range sorted {
		res, err := h.svc.Source(ctx, c, service.SourceArgs{SourceID: &id})
		if err != nil {
			return nil, err
		}
		env, err := decode(res)
		if err != nil {
			return nil, err
		}
		if env.Status != domain.StatusFound {
			continue
		}
		var d domain.SourceDescriptor
		if err := json.Unmarshal(env.Data, &d); err != nil {
			return nil, domain.Internal(err)
		}
		p.sources[id] = d
	}
	return p, nil
}
