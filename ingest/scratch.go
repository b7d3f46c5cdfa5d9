package ingest

import (
	"bytes"
	"encoding/binary"
)

// The tables of the scratch store, ingest's external sort. A key is the tag, a
// zero byte, then its parts joined by zero bytes (appendWorkKey). A "record" is
// uvarint(input line number) followed by the binary form of what ingest
// parsed from that line, and for documents their JSON as served (see put,
// and appendScratchRecord and decodeRecord in record.go). The lower-case tables are
// read in key order only: most are keyed by the product's canonical subject
// first, so that the build phase reads each product's records together, and
// the document join's inputs by document id; the upper-case ones are id
// lookups made while the input is read.
//
// The lower-case tables (orderedTables) live in the scratch store's ordered
// store, sorted runs merged by each ordered pass; the id tables live in its
// lookup store (see scratch.Store).
const (
	// tagAlias: identifier -> canonical subject, zero byte, owner tenant,
	// zero byte, uvarint line of products.ndjson (appendOwned).
	tagAlias byte = 'A'
	// tagProduct: canonical subject -> the product's record.
	tagProduct byte = 'P'
	// tagClaimID: claim id -> canonical subject, owner tenant and line
	// (appendOwned); for duplicate ids and evidence.claim_id.
	tagClaimID byte = 'C'
	// tagClaim: canonical subject, claim id -> the claim's record.
	tagClaim byte = 'c'
	// tagDocument: document id -> its source's tenant, zero byte, uvarint
	// line: for duplicate ids and evidence.document_id. The record is in
	// tagDocRecord.
	tagDocument byte = 'D'
	// tagDocRecord: document id -> the document's record. Read in document
	// order by joinDocuments only, so it lives in the ordered store.
	tagDocRecord byte = 'o'
	// tagEvidenceID: evidence id -> uvarint line; for duplicate ids.
	tagEvidenceID byte = 'E'
	// tagEvidence: canonical subject, claim id, evidence id -> the record.
	tagEvidence byte = 'e'
	// tagVerdict: canonical subject, line number (8 bytes big-endian) -> the
	// record; the line keeps a product's verdicts in input order.
	tagVerdict byte = 'v'
	// tagDocUse: document id, canonical subject -> nothing: the product's
	// evidence names the document. Written with the evidence, read in
	// document order by joinDocuments.
	tagDocUse byte = 'u'
	// tagSubjectDoc: canonical subject, document id -> the document's
	// record: written by joinDocuments, read by the views with the rest of
	// the product's records.
	tagSubjectDoc byte = 'd'
	// tagViewTenants: canonical subject of a public product -> the tenants
	// with views of their own, joined by zero bytes; written by the build
	// phase, read when the aliases are written.
	tagViewTenants byte = 'T'
)

// orderedTables are the tables that are read in key order only, each in
// one pass, and never by key.
var orderedTables = []byte{tagProduct, tagClaim, tagEvidence, tagVerdict, tagDocRecord, tagDocUse, tagSubjectDoc, tagStaged, tagStagedDocs}

// skey returns the scratch key of table tag with parts, in a buffer reused
// by the next call.
func (b *builder) skey(tag byte, parts ...string) []byte {
	b.key = appendWorkKey(b.key[:0], tag, parts...)
	return b.key
}

// put writes a scratch record (appendScratchRecord's) under key.
func (b *builder) put(key, rec []byte) *reject {
	if err := b.scratch.Set(key, rec); err != nil {
		return rejectf("scratch store: %v", err)
	}
	return nil
}

// splitDocument splits a document's tagDocument value into tenant and line.
func splitDocument(v []byte) (tenant, line []byte) {
	t, r, _ := bytes.Cut(v, []byte{0})
	return t, r
}

// subjectOf returns the subject part of a scratch key "t\x00<subject>\x00…".
func subjectOf(key []byte) []byte {
	rest := key[2:]
	if i := bytes.IndexByte(rest, 0); i >= 0 {
		return rest[:i]
	}
	return rest
}

// appendOwned appends the scratch value of an alias or a claim id: the
// canonical subject, a zero byte, the owner tenant, a zero byte, then the
// line number as a uvarint.
func appendOwned(dst []byte, canonical, owner string, line int) []byte {
	dst = append(append(append(append(dst, canonical...), 0), owner...), 0)
	return binary.AppendUvarint(dst, uint64(line))
}

// splitOwned reads a value that appendOwned wrote.
func splitOwned(v []byte) (canonical, owner []byte, line int) {
	canonical, rest, _ := bytes.Cut(v, []byte{0})
	owner, rest, _ = bytes.Cut(rest, []byte{0})
	n, _ := binary.Uvarint(rest)
	return canonical, owner, int(n)
}

// appendWorkKey appends to dst the key of a table of ingest's working
// stores, the scratch store and the kept records: tag, a zero byte, then
// parts joined by zero bytes. The kept records persist from one build to
// the next, so this layout is part of their format: it is ingest's own, and
// stays as it is whatever kv does with the snapshot store's keys.
func appendWorkKey(dst []byte, tag byte, parts ...string) []byte {
	dst = append(dst, tag, 0)
	for i, p := range parts {
		if i > 0 {
			dst = append(dst, 0)
		}
		dst = append(dst, p...)
	}
	return dst
}

// workKey returns the key appendWorkKey appends.
func workKey(tag byte, parts ...string) []byte { return appendWorkKey(nil, tag, parts...) }
