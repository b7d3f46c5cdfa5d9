package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"

	"github.com/productdata/pds/domain"
)

// The scratch store's record format. A record is written once, when its line
// is read, and decoded once, when its product's views are built; a compact
// binary form decodes several times faster than JSON and, decoded from one
// string, allocates once per record instead of once per field. It is written
// here rather than with a serialisation library because the fields are few
// and flat, and because a record's strings can then share that one string.
//
// Every field is written in the order of its struct: a string as a uvarint
// length and its bytes; an optional value (pointer, raw JSON, slice) as a
// presence byte (0 absent/nil, 1 present) and then the value; a slice as its
// length, then its items; an integer as a varint; a float as its 8 IEEE 754
// bytes. The format lives only for the length of one build, so it carries
// no version.

// recordEncoder appends the binary form of records to b.
type recordEncoder struct{ b []byte }

func (e *recordEncoder) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *recordEncoder) present(ok bool) {
	if ok {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *recordEncoder) optStr(p *string) {
	e.present(p != nil)
	if p != nil {
		e.str(*p)
	}
}

func (e *recordEncoder) strs(list []string) {
	e.present(list != nil)
	if list == nil {
		return
	}
	e.b = binary.AppendUvarint(e.b, uint64(len(list)))
	for _, s := range list {
		e.str(s)
	}
}

// raw writes a JSON value as json.Marshal would (compact, no HTML escapes;
// nil as null), so that it decodes to what a JSON round trip gave.
func (e *recordEncoder) raw(r json.RawMessage) error {
	e.present(true)
	if r == nil {
		e.str("null")
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, r); err != nil {
		return err
	}
	e.str(buf.String())
	return nil
}

func (e *recordEncoder) int(v int64) { e.b = binary.AppendVarint(e.b, v) }

func (e *recordEncoder) optInt(p *int64) {
	e.present(p != nil)
	if p != nil {
		e.int(*p)
	}
}

func (e *recordEncoder) optFloat(p *float64) {
	e.present(p != nil)
	if p != nil {
		e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(*p))
	}
}

// recordDecoder reads what recordEncoder wrote from s; the strings it returns
// are substrings of s. The first error sticks.
type recordDecoder struct {
	s   string
	err error
}

func (d *recordDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	var v uint64
	for i := 0; i < len(d.s) && i < binary.MaxVarintLen64; i++ {
		c := d.s[i]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			d.s = d.s[i+1:]
			return v
		}
	}
	d.err = errCorruptRecord
	return 0
}

func (d *recordDecoder) int() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1) // zig-zag, as binary.AppendVarint
}

func (d *recordDecoder) str() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.s)) {
		d.err = errCorruptRecord
		return ""
	}
	s := d.s[:n]
	d.s = d.s[n:]
	return s
}

func (d *recordDecoder) present() bool {
	if d.err != nil || len(d.s) == 0 || d.s[0] > 1 {
		d.err = errCorruptRecord
		return false
	}
	ok := d.s[0] == 1
	d.s = d.s[1:]
	return ok
}

func (d *recordDecoder) optStr() *string {
	if !d.present() {
		return nil
	}
	s := d.str()
	return &s
}

func (d *recordDecoder) strs() []string {
	if !d.present() {
		return nil
	}
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.s)) { // each item takes at least a byte
		d.err = errCorruptRecord
		return nil
	}
	list := make([]string, n)
	for i := range list {
		list[i] = d.str()
	}
	return list
}

func (d *recordDecoder) raw() json.RawMessage {
	if !d.present() {
		return nil
	}
	return json.RawMessage(d.str())
}

func (d *recordDecoder) optInt() *int64 {
	if !d.present() {
		return nil
	}
	v := d.int()
	return &v
}

func (d *recordDecoder) optFloat() *float64 {
	if !d.present() {
		return nil
	}
	if len(d.s) < 8 {
		d.err = errCorruptRecord
		return nil
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64([]byte(d.s[:8])))
	d.s = d.s[8:]
	return &v
}

func (e *recordEncoder) product(p *domain.Product) {
	e.strs(p.Identifiers)
	e.str(p.Manufacturer)
	e.str(p.ManufacturerGLN)
	e.str(p.Brand)
	e.str(p.TrustLevel)
	e.str(p.Status)
	e.str(p.UpdatedAt)
	e.str(p.Tenant)
}

func (d *recordDecoder) product(p *domain.Product) {
	p.Identifiers = d.strs()
	p.Manufacturer = d.str()
	p.ManufacturerGLN = d.str()
	p.Brand = d.str()
	p.TrustLevel = d.str()
	p.Status = d.str()
	p.UpdatedAt = d.str()
	p.Tenant = d.str()
}

func (e *recordEncoder) claim(c *domain.Claim) error {
	e.str(c.ID)
	e.str(c.Subject)
	e.str(c.Predicate)
	if err := e.raw(c.Object.Value); err != nil {
		return err
	}
	e.optStr(c.Object.Unit)
	e.optStr(c.Object.Language)
	e.str(c.ClaimType)
	e.optStr(c.Method)
	e.optStr(c.MethodVersion)
	e.optStr(c.SourceRef)
	e.optStr(c.PublisherRef)
	if len(c.EvidenceRefs) == 0 {
		e.strs(nil) // omitempty: a JSON round trip gives nil
	} else {
		e.strs(c.EvidenceRefs)
	}
	e.str(c.VerificationStatus)
	e.optStr(c.VerificationMethod)
	e.str(c.TrustLevel)
	e.optFloat(c.Confidence)
	e.optStr(c.PublishedAt)
	e.str(c.RetrievedAt)
	e.optStr(c.SupersededBy)
	return nil
}

func (d *recordDecoder) claim(c *domain.Claim) {
	c.ID = d.str()
	c.Subject = d.str()
	c.Predicate = d.str()
	c.Object.Value = d.raw()
	c.Object.Unit = d.optStr()
	c.Object.Language = d.optStr()
	c.ClaimType = d.str()
	c.Method = d.optStr()
	c.MethodVersion = d.optStr()
	c.SourceRef = d.optStr()
	c.PublisherRef = d.optStr()
	c.EvidenceRefs = d.strs()
	c.VerificationStatus = d.str()
	c.VerificationMethod = d.optStr()
	c.TrustLevel = d.str()
	c.Confidence = d.optFloat()
	c.PublishedAt = d.optStr()
	c.RetrievedAt = d.str()
	c.SupersededBy = d.optStr()
}

func (e *recordEncoder) document(doc *domain.Document) {
	e.str(doc.ID)
	e.str(doc.SourceID)
	e.str(doc.MediaType)
	e.optStr(doc.URL)
	e.str(doc.ContentHash)
	e.int(doc.Size)
	e.str(doc.RetrievedAt)
}

func (d *recordDecoder) document(doc *domain.Document) {
	doc.ID = d.str()
	doc.SourceID = d.str()
	doc.MediaType = d.str()
	doc.URL = d.optStr()
	doc.ContentHash = d.str()
	doc.Size = d.int()
	doc.RetrievedAt = d.str()
}

func (e *recordEncoder) evidence(ev *domain.Evidence) {
	e.str(ev.ID)
	e.str(ev.ClaimID)
	e.str(ev.DocumentID)
	e.str(ev.Locator.Kind)
	e.str(ev.Locator.ContentHash)
	e.optInt(ev.Locator.Start)
	e.optInt(ev.Locator.End)
	e.str(ev.Locator.Pointer)
}

func (d *recordDecoder) evidence(ev *domain.Evidence) {
	ev.ID = d.str()
	ev.ClaimID = d.str()
	ev.DocumentID = d.str()
	ev.Locator.Kind = d.str()
	ev.Locator.ContentHash = d.str()
	ev.Locator.Start = d.optInt()
	ev.Locator.End = d.optInt()
	ev.Locator.Pointer = d.str()
}

func (e *recordEncoder) verdict(v *domain.Verdict) {
	e.str(v.Subject)
	e.str(v.Class)
	e.str(v.Value)
	e.optStr(v.Rule)
	e.str(v.EvaluatedAt)
}

func (d *recordDecoder) verdict(v *domain.Verdict) {
	v.Subject = d.str()
	v.Class = d.str()
	v.Value = d.str()
	v.Rule = d.optStr()
	v.EvaluatedAt = d.str()
}

// appendScratchRecord appends the scratch record of v, a record read from
// input line number line that passed its checks, to dst: the line number,
// then the binary fields, and for documents, whose JSON the views embed as it
// is, that JSON after them (a document is read once per product that links to
// it). A claim's JSON is encoded again from its fields when its views are
// built, on the workers: that costs less than carrying it through the scratch
// store. It returns dst and the record, a slice of it. Parties and sources
// are not written to the scratch store: for them the record is nil and dst
// is returned unchanged, as it is on error.
func appendScratchRecord(dst []byte, line int, v any) (out, rec []byte, err error) {
	start := len(dst)
	e := recordEncoder{b: binary.AppendUvarint(dst, uint64(line))}
	withJSON := false
	switch r := v.(type) {
	case *domain.Product:
		e.product(r)
	case *domain.Claim:
		if err := e.claim(r); err != nil {
			return dst, nil, err
		}
	case *domain.Document:
		e.document(r)
		withJSON = true
	case *domain.Evidence:
		e.evidence(r)
	case *domain.Verdict:
		e.verdict(r)
	default:
		return dst, nil, nil // parties and sources stay in memory
	}
	if withJSON {
		j, err := domain.Marshal(v)
		if err != nil {
			return dst, nil, err
		}
		e.b = append(e.b, j...)
	}
	return e.b, e.b[start:len(e.b):len(e.b)], nil
}

// decodeRecord decodes a scratch record (appendScratchRecord's) into v, one
// of the record types, and returns its line number and the JSON that follows
// the fields of a document (a copy; nil for the other types).
func decodeRecord(b []byte, v any) (line int, rawJSON []byte, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, nil, errCorruptRecord
	}
	d := recordDecoder{s: string(b[k:])}
	switch r := v.(type) {
	case *domain.Product:
		d.product(r)
	case *domain.Claim:
		d.claim(r)
	case *domain.Document:
		d.document(r)
	case *domain.Evidence:
		d.evidence(r)
	case *domain.Verdict:
		d.verdict(r)
	default:
		return 0, nil, errCorruptRecord
	}
	if d.err != nil {
		return 0, nil, d.err
	}
	if _, ok := v.(*domain.Document); ok {
		rawJSON = []byte(d.s)
	}
	return int(n), rawJSON, nil
}
