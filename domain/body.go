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
// and with enabled always said (true when the input did not say).
func ServedSource(s *Source) Source {
	c := *s
	c.Tenant = ""
	enabled := s.IsEnabled()
	c.Enabled = &enabled
	return c
}
