package ingest

import (
	"fmt"
	"slices"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest/scratch"
)

// The references of claims, evidence and verdicts name records of files read
// before (products, claims, documents), which are committed to the scratch
// store by then and do not change after: the workers look them up, for a whole
// batch of lines at once, so that these point reads run on every core
// instead of in the line-order goroutine. A batch looks up each distinct name
// once, in key order: ascending seeks let Pebble step forward from where the
// last one ended (its TrySeekUsingNext) instead of seeking every level from
// the top, and the names of neighbouring lines tend to sit in the same block.

// lineRef is what a worker found for a line's references.
type lineRef struct {
	// canonical and owner are the canonical subject and owner tenant of the
	// product that the line's subject (claims, verdicts) or claim (evidence)
	// belongs to.
	canonical, owner string
	// baseDoc is, for evidence of an incremental build naming a document
	// the change set does not hold, the base's record of it.
	baseDoc []byte
}

// refFound is what a lookup of one name found: the reference it gives (for
// a document, only owner is set: its source's tenant), and whether the name
// exists.
type refFound struct {
	ref lineRef
	ok  bool
}

// refLookup reads committed scratch records for one batch through one
// reader, made by its first lookup (a batch with nothing to look up makes
// none). Its lookups must come in ascending key order (see above).
type refLookup struct {
	scratch  *scratch.Store
	r        *scratch.Reader // made by the first lookup
	err      error           // from making r
	key, buf []byte
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

// lookupAll looks up the distinct names of table tag in key order and
// returns what each gave; value turns a found record into its reference.
// names is sorted in place. Only a name that is not there is absent: a read
// that fails is the error, naming the key.
func (l *refLookup) lookupAll(tag byte, names []string, value func(v []byte) lineRef) (map[string]refFound, error) {
	slices.Sort(names)
	names = slices.Compact(names)
	found := make(map[string]refFound, len(names))
	for _, name := range names {
		l.key = appendWorkKey(l.key[:0], tag, name)
		v, ok, err := l.get(l.key)
		if err != nil {
			return nil, fmt.Errorf("scratch store: read key %q: %w", l.key, err)
		}
		if !ok {
			found[name] = refFound{}
			continue
		}
		l.buf = v
		found[name] = refFound{ref: value(v), ok: true}
	}
	return found, nil
}

// ownedRef reads an appendOwned value.
func ownedRef(v []byte) lineRef {
	c, o, _ := splitOwned(v)
	return lineRef{canonical: string(c), owner: string(o)}
}

// documentRef reads a document's value: its source's tenant, as owner.
func documentRef(v []byte) lineRef {
	t, _ := splitDocument(v)
	return lineRef{owner: string(t)}
}

// pending returns the batch's lines still to be judged (parsed, not yet
// rejected), as records of type T.
func pending[T any](res []parseResult) (idx []int, recs []*T) {
	for i := range res {
		if res[i].r != nil || res[i].p.v == nil {
			continue
		}
		idx = append(idx, i)
		recs = append(recs, res[i].p.v.(*T))
	}
	return idx, recs
}

// names returns the name each record gives, for lookupAll.
func names[T any](recs []*T, name func(*T) string) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = name(r)
	}
	return out
}

func claimSubject(c *domain.Claim) string        { return c.Subject }
func verdictSubject(v *domain.Verdict) string    { return v.Subject }
func evidenceClaim(e *domain.Evidence) string    { return e.ClaimID }
func evidenceDocument(e *domain.Evidence) string { return e.DocumentID }

// resolveClaims checks the subject and source of each parsed claim.
func (b *builder) resolveClaims(res []parseResult) error {
	idx, claims := pending[domain.Claim](res)
	l := refLookup{scratch: b.scratch}
	defer l.close()
	products, err := l.lookupAll(tagAlias, names(claims, claimSubject), ownedRef)
	if err != nil {
		return err
	}
	for k, c := range claims {
		i := idx[k]
		p := products[c.Subject]
		if !p.ok {
			if res[i].r, err = b.unknownSubject(c.Subject); err != nil {
				return err
			}
			continue
		}
		if t := b.cat.tenantOfClaim(c); t != "" && p.ref.owner != "" && t != p.ref.owner {
			res[i].r = rejectf("source_ref %s belongs to tenant %q but product %s belongs to tenant %q", domain.Str(c.SourceRef), t, p.ref.canonical, p.ref.owner)
			continue
		}
		res[i].p.ref = p.ref
	}
	return nil
}

// resolveEvidence checks the claim and document of each parsed evidence
// line, and that they belong to the same tenant.
func (b *builder) resolveEvidence(res []parseResult) error {
	idx, evs := pending[domain.Evidence](res)
	l := refLookup{scratch: b.scratch}
	defer l.close()
	// Claim ids (tagClaimID) sort before document ids (tagDocument), so
	// one reader sees every seek in ascending order.
	claims, err := l.lookupAll(tagClaimID, names(evs, evidenceClaim), ownedRef)
	if err != nil {
		return err
	}
	docs, err := l.lookupAll(tagDocument, names(evs, evidenceDocument), documentRef)
	if err != nil {
		return err
	}
	var base map[string]baseDoc
	if b.up != nil {
		if base, err = b.baseDocuments(evs, docs); err != nil {
			return err
		}
	}
	for k, e := range evs {
		i := idx[k]
		c := claims[e.ClaimID]
		if !c.ok {
			res[i].r = rejectf("claim_id %s names no claim in %s", e.ClaimID, FileClaims)
			continue
		}
		d := docs[e.DocumentID]
		if bd, ok := base[e.DocumentID]; !d.ok && ok {
			d = refFound{ref: lineRef{owner: bd.tenant}, ok: true}
			res[i].p.ref.baseDoc = bd.rec
		}
		if !d.ok {
			res[i].r = rejectf("document_id %s names no document in %s", e.DocumentID, FileDocuments)
			continue
		}
		if t := d.ref.owner; t != "" && c.ref.owner != "" && t != c.ref.owner {
			res[i].r = rejectf("document %s belongs to tenant %q but the claim's product belongs to tenant %q", e.DocumentID, t, c.ref.owner)
			continue
		}
		baseDoc := res[i].p.ref.baseDoc
		res[i].p.ref = c.ref
		res[i].p.ref.baseDoc = baseDoc
	}
	return nil
}

// resolveVerdicts checks the subject of each parsed verdict.
func (b *builder) resolveVerdicts(res []parseResult) error {
	idx, verdicts := pending[domain.Verdict](res)
	l := refLookup{scratch: b.scratch}
	defer l.close()
	products, err := l.lookupAll(tagAlias, names(verdicts, verdictSubject), ownedRef)
	if err != nil {
		return err
	}
	for k, v := range verdicts {
		i := idx[k]
		p := products[v.Subject]
		if !p.ok {
			if res[i].r, err = b.unknownSubject(v.Subject); err != nil {
				return err
			}
			continue
		}
		res[i].p.ref = p.ref
	}
	return nil
}

// unknownSubject is the reject of a claim or verdict whose subject names no
// product of products.ndjson: in an incremental build, it may name a kept
// product, which the change set must restate whole to change.
func (b *builder) unknownSubject(subject string) (*reject, error) {
	if b.up != nil {
		product, ok, err := b.up.baseProduct(subject)
		if err != nil {
			return nil, err
		}
		if ok {
			return notRestated(subject, product), nil
		}
	}
	return rejectf("subject %s names no product in %s", subject, FileProducts), nil
}
