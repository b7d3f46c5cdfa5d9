package kv

import (
	"encoding/binary"
	"strings"
)

// View is a precomputed answer: Body holds the envelope members before meta
// (without the surrounding braces) and Coverage the JSON of meta.coverage, or
// nothing. A public view also lists the tenants that have views of their
// own, so that a lookup by canonical subject needs no alias read.
type View struct {
	Tenants  []string
	Body     []byte
	Coverage []byte
}

// AppendView encodes v onto dst: uvarint(len(Tenants)), each tenant as
// uvarint(len) and bytes, uvarint(len(Body)), Body, Coverage.
func AppendView(dst []byte, v View) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(v.Tenants)))
	for _, t := range v.Tenants {
		dst = binary.AppendUvarint(dst, uint64(len(t)))
		dst = append(dst, t...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(v.Body)))
	dst = append(dst, v.Body...)
	return append(dst, v.Coverage...)
}

// HasTenant reports whether tenant has a view of its own.
func (v View) HasTenant(tenant string) bool {
	for _, t := range v.Tenants {
		if t == tenant {
			return true
		}
	}
	return false
}

// DecodeView splits an encoded view; Body and Coverage alias b.
func DecodeView(b []byte) (View, error) {
	var v View
	nt, w := binary.Uvarint(b)
	if w <= 0 || nt > uint64(len(b)) {
		return v, errCorrupt
	}
	b = b[w:]
	for i := uint64(0); i < nt; i++ {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			return v, errCorrupt
		}
		v.Tenants = append(v.Tenants, string(b[w:w+int(n)]))
		b = b[w+int(n):]
	}
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return v, errCorrupt
	}
	v.Body, v.Coverage = b[w:w+int(n)], b[w+int(n):]
	return v, nil
}

// Alias says which product an identifier names, who may see it, and which
// tenants have views of their own.
type Alias struct {
	Subject     string   // canonical subject
	Owner       string   // "" = public product, else the only tenant that may see it
	ViewTenants []string // tenants with their own views, sorted
}

// VisibleTo reports whether a caller of tenant may see the product.
func (a Alias) VisibleTo(tenant string) bool { return a.Owner == "" || a.Owner == tenant }

// ViewTenant returns the tenant whose view a caller of tenant reads.
func (a Alias) ViewTenant(tenant string) string {
	if a.Owner != "" {
		return a.Owner
	}
	for _, t := range a.ViewTenants {
		if t == tenant {
			return t
		}
	}
	return ""
}

// AppendAlias encodes a onto dst: fields joined by zero bytes.
func AppendAlias(dst []byte, a Alias) []byte {
	dst = append(dst, a.Subject...)
	dst = append(dst, 0)
	dst = append(dst, a.Owner...)
	for _, t := range a.ViewTenants {
		dst = append(dst, 0)
		dst = append(dst, t...)
	}
	return dst
}

// DecodeAlias decodes an alias value.
func DecodeAlias(b []byte) (Alias, error) {
	parts := strings.Split(string(b), "\x00")
	if len(parts) < 2 || parts[0] == "" {
		return Alias{}, errCorrupt
	}
	a := Alias{Subject: parts[0], Owner: parts[1]}
	if len(parts) > 2 {
		a.ViewTenants = parts[2:]
	}
	return a, nil
}
