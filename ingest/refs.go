package ingest

import (
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/kv"
)

// The references of claims, evidence and verdicts name records of files read
// before (products, claims, documents), which are committed to the scratch
// store by then and no longer change: the workers look them up, for a whole
// batch of lines at once, so that these point reads run on every core
// instead of in the line-order goroutine. Lines of one product, or one
// claim, tend to come together, so each lookup remembers its last answer.

// lineRef is what a worker found for a line's references.
type lineRef struct {
	// canonical and owner are the canonical subject and owner tenant of the
	// product that the line's subject (claims, verdicts) or claim (evidence)
	// belongs to.
	canonical, owner string
}

// refLookup reads committed scratch records for one batch, through one
// reader, remembering the last answer of each kind.
type refLookup struct {
	scratch              *kv.Scratch
	r                    *kv.ScratchReader // made by the first lookup
	err                  error             // from making r
	key, buf             []byte
	product, claim, doc  string // the last names looked up ("" for none)
	productOK, claimOK   bool
	productRef, claimRef lineRef
	docOK                bool
	docTenant            string
}

// get reads the committed value of key into l.buf.
func (l *refLookup) get(key []byte) ([]byte, bool, error) {
	if l.r == nil && l.err == nil {
		l.r, l.err = l.scratch.NewReader()
	}
	if l.err != nil {
		return nil, false, l.err
	}
	return l.r.Get(key, l.buf)
}

// close closes the reader, if one was made.
func (l *refLookup) close() {
	if l.r != nil {
		l.r.Close()
	}
}

// owned looks up the appendOwned value of table tag for name.
func (l *refLookup) owned(tag byte, name string) (lineRef, bool) {
	l.key = kv.AppendKey(l.key[:0], tag, name)
	v, ok, err := l.get(l.key)
	if err != nil || !ok {
		return lineRef{}, false
	}
	l.buf = v
	c, o, _ := splitOwned(v)
	return lineRef{canonical: string(c), owner: string(o)}, true
}

func (l *refLookup) productOf(subject string) (lineRef, bool) {
	if subject != l.product || subject == "" {
		l.product = subject
		l.productRef, l.productOK = l.owned(tagAlias, subject)
	}
	return l.productRef, l.productOK
}

func (l *refLookup) claimOf(id string) (lineRef, bool) {
	if id != l.claim || id == "" {
		l.claim = id
		l.claimRef, l.claimOK = l.owned(tagClaimID, id)
	}
	return l.claimRef, l.claimOK
}

// docTenantOf returns the tenant of a document's source.
func (l *refLookup) docTenantOf(id string) (string, bool) {
	if id != l.doc || id == "" {
		l.doc = id
		l.key = kv.AppendKey(l.key[:0], tagDocument, id)
		v, ok, err := l.get(l.key)
		l.docOK = err == nil && ok
		l.docTenant = ""
		if l.docOK {
			l.buf = v
			t, _ := splitDocument(v)
			l.docTenant = string(t)
		}
	}
	return l.docTenant, l.docOK
}

// resolveClaims checks the subject and source of each parsed claim.
func (b *builder) resolveClaims(res []parseResult) {
	l := refLookup{scratch: b.scratch}
	defer l.close()
	for i := range res {
		if res[i].r != nil || res[i].p.v == nil {
			continue
		}
		c := res[i].p.v.(*domain.Claim)
		ref, ok := l.productOf(c.Subject)
		if !ok {
			res[i].r = rejectf("subject %s names no product in %s", c.Subject, FileProducts)
			continue
		}
		if t := b.cat.tenantOfClaim(c); t != "" && ref.owner != "" && t != ref.owner {
			res[i].r = rejectf("source_ref %s belongs to tenant %q but product %s belongs to tenant %q", domain.Str(c.SourceRef), t, ref.canonical, ref.owner)
			continue
		}
		res[i].p.ref = ref
	}
}

// resolveEvidence checks the claim and document of each parsed evidence
// line, and that they belong to the same tenant.
func (b *builder) resolveEvidence(res []parseResult) {
	l := refLookup{scratch: b.scratch}
	defer l.close()
	for i := range res {
		if res[i].r != nil || res[i].p.v == nil {
			continue
		}
		e := res[i].p.v.(*domain.Evidence)
		ref, ok := l.claimOf(e.ClaimID)
		if !ok {
			res[i].r = rejectf("claim_id %s names no claim in %s", e.ClaimID, FileClaims)
			continue
		}
		t, ok := l.docTenantOf(e.DocumentID)
		if !ok {
			res[i].r = rejectf("document_id %s names no document in %s", e.DocumentID, FileDocuments)
			continue
		}
		if t != "" && ref.owner != "" && t != ref.owner {
			res[i].r = rejectf("document %s belongs to tenant %q but the claim's product belongs to tenant %q", e.DocumentID, t, ref.owner)
			continue
		}
		res[i].p.ref = ref
	}
}

// resolveVerdicts checks the subject of each parsed verdict.
func (b *builder) resolveVerdicts(res []parseResult) {
	l := refLookup{scratch: b.scratch}
	defer l.close()
	for i := range res {
		if res[i].r != nil || res[i].p.v == nil {
			continue
		}
		v := res[i].p.v.(*domain.Verdict)
		ref, ok := l.productOf(v.Subject)
		if !ok {
			res[i].r = rejectf("subject %s names no product in %s", v.Subject, FileProducts)
			continue
		}
		res[i].p.ref = ref
	}
}
