package ingest

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/progress"
)

// cursor walks one scratch table in subject order alongside the products.
type cursor struct {
	it *kv.Iter
	ok bool
}

func (b *builder) newCursor(tag byte) (*cursor, error) {
	it, err := b.scratch.NewIter([]byte{tag, 0})
	if err != nil {
		return nil, err
	}
	return &cursor{it: it, ok: it.First()}, nil
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

// writeViews walks the products in subject order and writes their views:
// one goroutine gathers each product's records from the scratch store,
// workers compute the views in parallel, and this goroutine writes them in
// subject order.
func (b *builder) writeViews(ctx context.Context) error {
	b.current.Store("views")
	b.count.Store(0)
	compute := func(bt []*subjectData) []subjectOut {
		out := make([]subjectOut, len(bt))
		for i, sd := range bt {
			out[i] = b.cat.compute(sd)
		}
		return out
	}
	write := func(outs []subjectOut) error {
		for i := range outs {
			if err := b.write(&outs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := ordered(ctx, b.gather, compute, write); err != nil {
		return err
	}
	return b.scratch.Flush()
}

// subjectsPerBatch is how many products travel together between stages.
const subjectsPerBatch = 64

// subjectOut is everything written for one product.
type subjectOut struct {
	subject string
	rejects []lineReject
	tenants []string // view tenants of a public product, for its aliases
	entries []kvEntry
	docs    []index.Doc
	err     error
}

type kvEntry struct{ key, value []byte }

// gather reads the products and their records in subject order. It reads
// only committed scratch data, so the writer may add to the scratch batch
// meanwhile.
func (b *builder) gather(ctx context.Context, emit func([]*subjectData) error) error {
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

	var bt []*subjectData
	send := func() error {
		err := emit(bt)
		bt = nil
		return err
	}
	for ok := products.First(); ok; ok = products.Next() {
		b.count.Add(1)
		sd, err := b.gatherOne(products, claims, evidence, verdicts)
		if err != nil {
			return err
		}
		bt = append(bt, sd)
		if len(bt) == subjectsPerBatch {
			if err := send(); err != nil {
				return err
			}
		}
	}
	if len(bt) > 0 {
		return send()
	}
	return nil
}

func (b *builder) gatherOne(products *kv.Iter, claims, evidence, verdicts *cursor) (*subjectData, error) {
	subject := append([]byte(nil), products.Key()[2:]...)
	sd := &subjectData{subject: string(subject), evidence: map[string][]evidenceRec{}, docs: map[string]*domain.Document{}, docRaw: map[string][]byte{}}
	if _, err := decodeRecord(products.Value(), &sd.product); err != nil {
		return nil, err
	}
	err := claims.each(subject, func(v []byte) error {
		cr := &claimRec{}
		var err error
		cr.line, err = decodeRecord(v, &cr.claim)
		cr.raw = recordJSON(v)
		sd.claims = append(sd.claims, cr)
		return err
	})
	if err != nil {
		return nil, err
	}
	err = evidence.each(subject, func(v []byte) error {
		var er evidenceRec
		var err error
		if er.line, err = decodeRecord(v, &er.ev); err != nil {
			return err
		}
		sd.evidence[er.ev.ClaimID] = append(sd.evidence[er.ev.ClaimID], er)
		if sd.docs[er.ev.DocumentID] == nil {
			dv, ok, err := b.scratch.GetCommitted(kv.Key(tagDocument, er.ev.DocumentID), nil)
			if err != nil || !ok {
				return fmt.Errorf("document %s vanished from scratch store: %v", er.ev.DocumentID, err)
			}
			d := &domain.Document{}
			_, rec := splitDocument(dv)
			if _, err := decodeRecord(rec, d); err != nil {
				return err
			}
			sd.docs[er.ev.DocumentID] = d
			sd.docRaw[er.ev.DocumentID] = recordJSON(rec)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = verdicts.each(subject, func(v []byte) error {
		var vr verdictRec
		var err error
		vr.line, err = decodeRecord(v, &vr.verdict)
		sd.verdicts = append(sd.verdicts, vr)
		return err
	})
	return sd, err
}

// compute applies the rules that need all of a product's records and builds
// its views for every visibility. It only reads the catalog.
func (c *catalog) compute(sd *subjectData) subjectOut {
	out := subjectOut{subject: sd.subject, rejects: checkSupersession(sd)}
	tenants := c.viewTenants(sd)
	visibilities := tenants
	if sd.product.Tenant == "" {
		visibilities = append([]string{""}, tenants...)
		out.tenants = tenants
	}
	for _, tenant := range visibilities {
		v, err := c.buildViews(sd, tenant)
		if err != nil {
			out.err = fmt.Errorf("views of %s: %w", sd.subject, err)
			return out
		}
		for _, w := range []struct {
			tag  byte
			view kv.View
		}{{kv.TagEvidence, v.evidence}, {kv.TagIdentity, v.identity}, {kv.TagPassport, v.passport}} {
			if tenant == "" {
				w.view.Tenants = tenants
			}
			out.entries = append(out.entries, kvEntry{kv.AppendViewKey(nil, w.tag, sd.subject, tenant), kv.AppendView(nil, w.view)})
		}
		doc := index.Doc{Subject: sd.subject, Manufacturer: sd.product.Manufacturer, Brand: sd.product.Brand,
			TrustLevel: domain.TrustRank(sd.product.TrustLevel), HasPassport: v.hasPassport,
			UpdatedAt: parseTime(sd.product.UpdatedAt), Visibility: tenant}
		if tenant == "" {
			doc.ShadowedFor = tenants
		}
		out.docs = append(out.docs, doc)
	}
	return out
}

// write reports a product's late rejects and writes its views, index
// documents and view tenants.
func (b *builder) write(o *subjectOut) error {
	if o.err != nil {
		return o.err
	}
	for _, r := range o.rejects {
		b.summary.Accepted[r.file]--
		if err := b.rejectLine(r.file, b.inputs.paths[r.file], r.line, r.reason); err != nil {
			return err
		}
	}
	if len(o.tenants) > 0 {
		if err := b.scratch.Set(kv.Key(tagViewTenants, o.subject), []byte(strings.Join(o.tenants, "\x00"))); err != nil {
			return err
		}
	}
	// The three view tables each get their entries in key order: per
	// visibility, e, i, p; tables are separate, so interleaving is fine.
	for _, e := range o.entries {
		if err := b.out.Set(e.key, e.value); err != nil {
			return err
		}
	}
	b.summary.Views += int64(len(o.docs))
	for _, d := range o.docs {
		if err := b.index.Add(d); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	return nil
}

// writeAliases writes one alias per product identifier, in identifier order.
func (b *builder) writeAliases() error {
	it, err := b.scratch.NewIter([]byte{tagAlias, 0})
	if err != nil {
		return err
	}
	defer it.Close()
	var key, val, tv []byte
	for ok := it.First(); ok; ok = it.Next() {
		c, owner, _ := splitOwned(it.Value())
		a := kv.Alias{Subject: string(c), Owner: string(owner)}
		if a.Owner == "" {
			var found bool
			tv, found, err = b.scratch.Get(kv.Key(tagViewTenants, a.Subject), tv)
			if err != nil {
				return err
			}
			if found {
				a.ViewTenants = strings.Split(string(tv), "\x00")
			}
		}
		key = append(append(key[:0], kv.TagAlias, 0), it.Key()[2:]...)
		val = kv.AppendAlias(val[:0], a)
		if err := b.out.Set(key, val); err != nil {
			return err
		}
	}
	return nil
}

// writeSources writes every source with its operator.
func (b *builder) writeSources() error {
	for _, s := range b.cat.sourceList {
		d := domain.SourceDescriptor{Source: *s}
		if s.OperatorPartyID != nil {
			if p := b.parties[*s.OperatorPartyID]; p != nil {
				d.Operator = &domain.Operator{ID: p.ID, Name: p.Name}
			}
		}
		j, err := domain.Marshal(d)
		if err != nil {
			return err
		}
		if err := b.out.Set(kv.Key(kv.TagSource, s.ID), j); err != nil {
			return err
		}
	}
	return nil
}

// MetaCursorKey names the secret that authenticates search cursors.
const MetaCursorKey = "cursor_key"

// MetaBuildID names the build id.
const MetaBuildID = "build_id"

func (b *builder) writeMeta() error {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	if err := b.out.Set(kv.Key(kv.TagMeta, MetaBuildID), []byte(b.summary.BuildID)); err != nil {
		return err
	}
	return b.out.Set(kv.Key(kv.TagMeta, MetaCursorKey), secret)
}

// startProgress prints a line about once a second until the returned stop is
// called (stop may be called more than once).
func (b *builder) startProgress() (stop func()) {
	if b.opts.Progress == nil {
		return func() {}
	}
	last, lastName, lastAt := int64(0), "", time.Now()
	return progress.Start(b.opts.ProgressEvery, func(now time.Time) {
		name := b.current.Load().(string)
		n := b.count.Load()
		if name != lastName {
			last, lastName = 0, name
		}
		rate := float64(n-last) / now.Sub(lastAt).Seconds()
		fmt.Fprintf(b.opts.Progress, "ingest: %s: %d records (%.0f/s)\n", name, n, rate)
		last, lastAt = n, now
	})
}
