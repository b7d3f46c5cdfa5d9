package domain

import (
	"fmt"
)

// Body is the members of a success envelope that precede meta: everything but
// request_id and meta, which the transport adds.
type Body struct {
	Status     string      `json:"status"`
	Reason     string      `json:"reason,omitempty"`
	Data       any         `json:"data"`
	Claims     any         `json:"claims,omitempty"`
	Sources    any         `json:"sources,omitempty"`
	Validation *Validation `json:"validation,omitempty"`
	Warnings   []Warning   `json:"warnings,omitempty"`
}

// Members returns the JSON of b without its surrounding braces, ready to be
// placed in an envelope.
func (b Body) Members() ([]byte, error) {
	out, err := Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encode body: %w", err)
	}
	return out[1 : len(out)-1], nil
}

// ServedSource returns s as callers see it: without the tenant it belongs to,
// without covers, which only ingest and coverage use, and with enabled always
// said (true when the input did not say).
func ServedSource(s *Source) Source {
	c := *s
	c.Tenant = ""
	c.Covers = nil
	enabled := s.IsEnabled()
	c.Enabled = &enabled
	return c
}

// LinkSource is the short form of a source inside an evidence link: which
// source it is and the licence terms a caller must honour when citing the
// link. The full Source is in the envelope's sources, once.
type LinkSource struct {
	ID                      string  `json:"id"`
	Kind                    string  `json:"kind"`
	LicenceName             string  `json:"licence_name"`
	MayRedistributeVerbatim bool    `json:"may_redistribute_verbatim"`
	MayRedistributeDerived  bool    `json:"may_redistribute_derived"`
	AttributionRequired     *string `json:"attribution_required"`
}

// LinkSourceOf returns the short form of s for an evidence link.
func LinkSourceOf(s *Source) LinkSource {
	return LinkSource{ID: s.ID, Kind: s.Kind, LicenceName: s.LicenceName, MayRedistributeVerbatim: s.MayRedistributeVerbatim,
		MayRedistributeDerived: s.MayRedistributeDerived, AttributionRequired: s.AttributionRequired}
}
