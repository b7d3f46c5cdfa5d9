package ingest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/kv"
)

// subjectOf returns the subject part of a scratch key "t\x00<subject>\x00…".
func subjectOf(key []byte) []byte {
	rest := key[2:]
	if i := bytes.IndexByte(rest, 0); i >= 0 {
		return rest[:i]
	}
	return rest
}

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

// buildViews walks the products in subject order and writes their views.
func (b *builder) buildViews(ctx context.Context) error {
	b.current.Store("views")
	b.count.Store(0)
	products, err := b.scratch.NewIter([]byte{'P', 0})
	if err != nil {
		return err
	}
	defer products.Close()
	claims, err := b.newCursor('c')
	if err != nil {
		return err
	}
	defer claims.it.Close()
	evidence, err := b.newCursor('e')
	if err != nil {
		return err
	}
	defer evidence.it.Close()
	verdicts, err := b.newCursor('v')
	if err != nil {
		return err
	}
	defer verdicts.it.Close()

	var key, val []byte
	for ok := products.First(); ok; ok = products.Next() {
		if b.count.Add(1)%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		subject := append([]byte(nil), products.Key()[2:]...)
		sd := &subjectData{subject: string(subject), evidence: map[string][]evidenceRec{}, docs: map[string]*domain.Document{}}
		if _, err := decodeRecord(products.Value(), &sd.product); err != nil {
			return err
		}
		if err := claims.each(subject, func(v []byte) error {
			cr := &claimRec{}
			var err error
			cr.line, err = decodeRecord(v, &cr.claim)
			sd.claims = append(sd.claims, cr)
			return err
		}); err != nil {
			return err
		}
		if err := evidence.each(subject, func(v []byte) error {
			var er evidenceRec
			var err error
			if er.line, err = decodeRecord(v, &er.ev); err != nil {
				return err
			}
			sd.evidence[er.ev.ClaimID] = append(sd.evidence[er.ev.ClaimID], er)
			if sd.docs[er.ev.DocumentID] == nil {
				dv, ok, err := b.scratch.Get(kv.Key('D', er.ev.DocumentID), nil)
				if err != nil || !ok {
					return fmt.Errorf("document %s vanished from scratch store: %v", er.ev.DocumentID, err)
				}
				d := &domain.Document{}
				if _, err := decodeRecord(dv, d); err != nil {
					return err
				}
				sd.docs[er.ev.DocumentID] = d
			}
			return nil
		}); err != nil {
			return err
		}
		if err := verdicts.each(subject, func(v []byte) error {
			var vr verdictRec
			var err error
			vr.line, err = decodeRecord(v, &vr.verdict)
			sd.verdicts = append(sd.verdicts, vr)
			return err
		}); err != nil {
			return err
		}
		for _, r := range checkSupersession(sd) {
			b.summary.Accepted[r.file]--
			if err := b.rejectLine(r.file, b.inputs.paths[r.file], r.line, r.reason); err != nil {
				return err
			}
		}

		tenants := b.cat.viewTenants(sd)
		visibilities := tenants
		if sd.product.Tenant == "" {
			visibilities = append([]string{""}, tenants...)
			if len(tenants) > 0 {
				if err := b.scratch.Set(kv.Key('T', sd.subject), []byte(strings.Join(tenants, "\x00"))); err != nil {
					return err
				}
			}
		}
		for _, tenant := range visibilities {
			v, err := b.cat.buildViews(sd, tenant)
			if err != nil {
				return fmt.Errorf("views of %s: %w", sd.subject, err)
			}
			for _, w := range []struct {
				tag  byte
				view kv.View
			}{{kv.TagEvidence, v.evidence}, {kv.TagIdentity, v.identity}, {kv.TagPassport, v.passport}} {
				key = kv.AppendViewKey(key[:0], w.tag, sd.subject, tenant)
				val = kv.AppendView(val[:0], w.view)
				if err := b.out.Set(key, val); err != nil {
					return err
				}
			}
			b.summary.Views++
			{
				doc := index.Doc{Subject: sd.subject, Manufacturer: sd.product.Manufacturer, Brand: sd.product.Brand,
					TrustLevel: domain.TrustRank(sd.product.TrustLevel), HasPassport: v.hasPassport,
					UpdatedAt: parseTime(sd.product.UpdatedAt), Visibility: tenant}
				if tenant == "" {
					doc.ShadowedFor = tenants
				}
				if err := b.index.Add(doc); err != nil {
					return fmt.Errorf("index: %w", err)
				}
			}
		}
	}
	return b.scratch.Flush()
}

// writeAliases writes one alias per product identifier, in identifier order.
func (b *builder) writeAliases() error {
	it, err := b.scratch.NewIter([]byte{'A', 0})
	if err != nil {
		return err
	}
	defer it.Close()
	var key, val, tv []byte
	for ok := it.First(); ok; ok = it.Next() {
		c, owner, _ := bytes.Cut(it.Value(), []byte{0})
		a := kv.Alias{Subject: string(c), Owner: string(owner)}
		if a.Owner == "" {
			var found bool
			tv, found, err = b.scratch.Get(kv.Key('T', a.Subject), tv)
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
		j, err := json.Marshal(d)
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
	every := b.opts.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		last, lastName, lastAt := int64(0), "", time.Now()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				name := b.current.Load().(string)
				n := b.count.Load()
				if name != lastName {
					last, lastName = 0, name
				}
				rate := float64(n-last) / now.Sub(lastAt).Seconds()
				fmt.Fprintf(b.opts.Progress, "ingest: %s: %d records (%.0f/s)\n", name, n, rate)
				last, lastAt = n, now
			}
		}
	}()
	var stopped bool
	return func() {
		if !stopped {
			stopped = true
			close(done)
			<-finished
		}
	}
}
