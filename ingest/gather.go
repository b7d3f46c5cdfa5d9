package ingest

import (
	"bytes"
	"context"
	"fmt"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest/scratch"
)

// cursor walks one scratch table in subject order alongside the products.
type cursor struct {
	it  *scratch.Iter
	tag byte
	ok  bool
}

func (b *builder) newCursor(tag byte) (*cursor, error) {
	it, err := b.scratch.NewIter([]byte{tag, 0})
	if err != nil {
		return nil, err
	}
	return &cursor{it: it, tag: tag, ok: it.First()}, nil
}

// seek moves the cursor to the first entry of subject or after.
func (c *cursor) seek(subject []byte) {
	key := append([]byte{c.tag, 0}, subject...)
	c.ok = c.it.SeekGE(key)
}

// each calls fn for every entry of subject; entries of subjects that sort
// before it (records whose product was rejected cannot exist, but be safe)
// are skipped.
func (c *cursor) each(subject []byte, fn func(v []byte) error) error {
	for c.ok {
		s := subjectOf(c.it.Key())
		switch cmp := bytes.Compare(s, subject); {
		case cmp < 0:
			c.ok = c.it.Next()
			continue
		case cmp > 0:
			return nil
		}
		if err := fn(c.it.Value()); err != nil {
			return err
		}
		c.ok = c.it.Next()
	}
	return nil
}

// rawSubject is one product's scratch records as gathered: copies of the
// values, not yet decoded (the workers decode them).
type rawSubject struct {
	subject                          string
	product                          []byte
	claims, evidence, verdicts, docs [][]byte
}

// gather reads the products and their records in subject order: every
// product, or (subjects, sorted) only those, found by seeking. It reads
// only committed scratch data, so the writer may add to the scratch batch
// meanwhile. The values of one batch are copied into one buffer.
func (b *builder) gather(ctx context.Context, subjects []string, emit func([]rawSubject) error) error {
	products, err := b.scratch.NewIter([]byte{tagProduct, 0})
	if err != nil {
		return err
	}
	defer products.Close()
	claims, err := b.newCursor(tagClaim)
	if err != nil {
		return err
	}
	defer claims.it.Close()
	evidence, err := b.newCursor(tagEvidence)
	if err != nil {
		return err
	}
	defer evidence.it.Close()
	verdicts, err := b.newCursor(tagVerdict)
	if err != nil {
		return err
	}
	defer verdicts.it.Close()
	docs, err := b.newCursor(tagSubjectDoc)
	if err != nil {
		return err
	}
	defer docs.it.Close()

	bt := make([]rawSubject, 0, subjectsPerBatch)
	var arena []byte
	// keep copies v into the batch's buffer; a full buffer is replaced, not
	// grown, so that slices handed out earlier stay valid.
	keep := func(v []byte) []byte {
		if len(arena)+len(v) > cap(arena) {
			arena = make([]byte, 0, max(256<<10, len(v)))
		}
		arena = append(arena, v...)
		return arena[len(arena)-len(v) : len(arena) : len(arena)]
	}
	// next moves to the next product to gather.
	next, key := 0, []byte(nil)
	step := func(first bool) bool {
		if subjects == nil {
			b.count.Add(1)
			if first {
				return products.First()
			}
			return products.Next()
		}
		for ; next < len(subjects); next++ {
			key = appendWorkKey(key[:0], tagProduct, subjects[next])
			if products.SeekGE(key) && bytes.Equal(products.Key(), key) {
				next++
				for _, c := range []*cursor{claims, evidence, verdicts, docs} {
					c.seek(key[2:])
				}
				return true
			}
		}
		return false
	}
	for ok := step(true); ok; ok = step(false) {
		subject := products.Key()[2:]
		rs := rawSubject{subject: string(subject), product: keep(products.Value())}
		add := func(list *[][]byte) func(v []byte) error {
			return func(v []byte) error {
				*list = append(*list, keep(v))
				return nil
			}
		}
		if err := claims.each(subject, add(&rs.claims)); err != nil {
			return err
		}
		if err := evidence.each(subject, add(&rs.evidence)); err != nil {
			return err
		}
		if err := verdicts.each(subject, add(&rs.verdicts)); err != nil {
			return err
		}
		if err := docs.each(subject, add(&rs.docs)); err != nil {
			return err
		}
		bt = append(bt, rs)
		if len(bt) == subjectsPerBatch {
			if err := emit(bt); err != nil {
				return err
			}
			bt, arena = make([]rawSubject, 0, subjectsPerBatch), nil
		}
	}
	if len(bt) > 0 {
		return emit(bt)
	}
	return nil
}

// decodeSubject decodes one product's gathered records, its documents
// included. It runs on the workers.
func (b *builder) decodeSubject(rs *rawSubject) (*subjectData, error) {
	sd := &subjectData{subject: rs.subject, evidence: map[string][]evidenceRec{},
		docs: make(map[string]*domain.Document, len(rs.docs)), docRaw: make(map[string][]byte, len(rs.docs))}
	if _, _, err := decodeRecord(rs.product, &sd.product); err != nil {
		return nil, err
	}
	sd.claims = make([]*claimRec, len(rs.claims))
	crs := make([]claimRec, len(rs.claims))
	for i, v := range rs.claims {
		cr := &crs[i]
		var err error
		if cr.line, cr.raw, err = decodeRecord(v, &cr.claim); err != nil {
			return nil, err
		}
		sd.claims[i] = cr
	}
	ds := make([]domain.Document, len(rs.docs))
	for i, v := range rs.docs {
		d := &ds[i]
		_, raw, err := decodeRecord(v, d)
		if err != nil {
			return nil, err
		}
		sd.docs[d.ID] = d
		sd.docRaw[d.ID] = raw
	}
	for _, v := range rs.evidence {
		var er evidenceRec
		var err error
		if er.line, _, err = decodeRecord(v, &er.ev); err != nil {
			return nil, err
		}
		if sd.docs[er.ev.DocumentID] == nil {
			return nil, fmt.Errorf("document %s of evidence %s was not joined to %s", er.ev.DocumentID, er.ev.ID, sd.subject)
		}
		sd.evidence[er.ev.ClaimID] = append(sd.evidence[er.ev.ClaimID], er)
	}
	sd.verdicts = make([]verdictRec, len(rs.verdicts))
	for i, v := range rs.verdicts {
		var err error
		if sd.verdicts[i].line, _, err = decodeRecord(v, &sd.verdicts[i].verdict); err != nil {
			return nil, err
		}
	}
	return sd, nil
}
