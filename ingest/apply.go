package ingest

import (
	"bytes"
	"encoding/binary"
	"sort"
	"strings"

	"github.com/productdata/pds/domain"
)

// duplicateID is the reject of a line whose id an earlier line of the same
// file has.
func duplicateID(id string, earlier int) *reject {
	return rejectf("id %s is already used by line %d", id, earlier)
}

func (b *builder) applyParty(p parsed, n int) *reject {
	party := p.v.(*domain.Party)
	// A party of the base (an incremental build) is replaced, not a
	// duplicate.
	if line, dup := b.partyLine[party.ID]; dup {
		return duplicateID(party.ID, line)
	}
	b.parties[party.ID] = party
	b.partyLine[party.ID] = n
	return nil
}

func (b *builder) applySource(p parsed, n int) *reject {
	s := p.v.(*domain.Source)
	if line, dup := b.sourceLine[s.ID]; dup {
		return duplicateID(s.ID, line)
	}
	b.cat.sources[s.ID] = s
	b.sourceLine[s.ID] = n
	return nil
}

func (b *builder) finishSources() error {
	for _, s := range b.cat.sources {
		b.cat.sourceList = append(b.cat.sourceList, s)
	}
	sort.Slice(b.cat.sourceList, func(i, j int) bool { return b.cat.sourceList[i].ID < b.cat.sourceList[j].ID })
	return b.cat.prepareSources()
}

// lookupProduct returns the canonical subject and owner of a product
// identifier, and the line of products.ndjson that named it, pending writes
// included (products.ndjson is being read).
func (b *builder) lookupProduct(subject string) (canonical, owner string, line int, ok bool) {
	v, ok, err := b.scratch.Get(b.skey(tagAlias, subject), b.buf)
	if err != nil || !ok {
		return "", "", 0, false
	}
	b.buf = v
	c, o, line := splitOwned(v)
	return string(c), string(o), line, true
}

func (b *builder) applyProduct(p parsed, n int) *reject {
	prod := p.v.(*domain.Product)
	for _, id := range prod.Identifiers {
		if !b.maybeSeen(b.skey(tagAlias, id)) {
			continue
		}
		if c, _, line, ok := b.lookupProduct(id); ok {
			return rejectf("identifier %s already names product %s (line %d)", id, c, line)
		}
	}
	var replaces string
	if b.up != nil {
		var r *reject
		if replaces, r = b.up.replaces(prod, n); r != nil {
			return r
		}
	}
	canonical := prod.Identifiers[0]
	if replaces != "" {
		b.up.replaced[replaces] = n
	}
	for _, id := range prod.Identifiers {
		b.rec = appendOwned(b.rec[:0], canonical, prod.Tenant, n)
		b.seen.testAndAdd(b.skey(tagAlias, id))
		if err := b.scratch.Set(b.key, b.rec); err != nil {
			return rejectf("scratch store: %v", err)
		}
	}
	if r := b.put(b.skey(tagProduct, canonical), p.rec); r != nil {
		return r
	}
	b.sample.add(canonical)
	return nil
}

func (b *builder) applyClaim(p parsed, n int) *reject {
	c := p.v.(*domain.Claim)
	canonical, owner := p.ref.canonical, p.ref.owner // resolveClaims checked them
	if b.markSeen(b.skey(tagClaimID, c.ID)) {
		if v, dup, _ := b.scratch.Get(b.key, b.buf); dup {
			b.buf = v
			_, _, line := splitOwned(v)
			return duplicateID(c.ID, line)
		}
	}
	b.rec = appendOwned(b.rec[:0], canonical, owner, n)
	if err := b.scratch.Set(b.key, b.rec); err != nil {
		return rejectf("scratch store: %v", err)
	}
	return b.put(b.skey(tagClaim, canonical, c.ID), p.rec)
}

// applyDocument checks a document's id and writes it. The id's value is its
// source's tenant, a zero byte, then its line, so evidence can check
// visibility without reading the record, which is written to the ordered
// store (tagDocRecord).
func (b *builder) applyDocument(p parsed, n int) *reject {
	d := p.v.(*domain.Document)
	if b.markSeen(b.skey(tagDocument, d.ID)) {
		if v, dup, _ := b.scratch.Get(b.key, b.buf); dup {
			b.buf = v
			_, rest := splitDocument(v)
			line, _ := binary.Uvarint(rest)
			return duplicateID(d.ID, int(line))
		}
	}
	if b.summary.Accepted[FileDocuments]%docSampleEvery == 0 {
		b.docSample = append(b.docSample, strings.Clone(d.ID))
	}
	if b.up != nil {
		if err := b.noteDocument(d.ID, p.rec); err != nil {
			return failed(err)
		}
	}
	tenant := b.cat.sources[d.SourceID].Tenant
	b.rec = binary.AppendUvarint(append(append(b.rec[:0], tenant...), 0), uint64(n))
	if err := b.scratch.Set(b.key, b.rec); err != nil {
		return rejectf("scratch store: %v", err)
	}
	return b.put(b.skey(tagDocRecord, d.ID), p.rec)
}

// docSampleEvery: 2,000 samples at 1,000,000 documents.
const docSampleEvery = 500

func (b *builder) applyEvidence(p parsed, n int) *reject {
	e := p.v.(*domain.Evidence)
	canonical := p.ref.canonical // resolveEvidence checked the references
	if p.ref.baseDoc != nil {
		if err := b.importDocument(e.DocumentID, p.ref.baseDoc); err != nil {
			return rejectf("scratch store: %v", err)
		}
	}
	if b.markSeen(b.skey(tagEvidenceID, e.ID)) {
		if v, dup, _ := b.scratch.Get(b.key, b.buf); dup {
			b.buf = v
			line, _ := binary.Uvarint(v)
			return duplicateID(e.ID, int(line))
		}
	}
	b.rec = binary.AppendUvarint(b.rec[:0], uint64(n))
	if err := b.scratch.Set(b.key, b.rec); err != nil {
		return rejectf("scratch store: %v", err)
	}
	if r := b.put(b.skey(tagEvidence, canonical, e.ClaimID, e.ID), p.rec); r != nil {
		return r
	}
	// The views need the document with the product's records: note the
	// pair for joinDocuments.
	if use := b.skey(tagDocUse, e.DocumentID, canonical); !bytes.Equal(use, b.lastUse) {
		b.lastUse = append(b.lastUse[:0], use...)
		if err := b.scratch.Set(use, nil); err != nil {
			return rejectf("scratch store: %v", err)
		}
	}
	return nil
}

func (b *builder) applyVerdict(p parsed, n int) *reject {
	canonical := p.ref.canonical // resolveVerdicts checked the subject
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], uint64(n))
	return b.put(b.skey(tagVerdict, canonical, string(seq[:])), p.rec)
}
