package ingest

import (
	"context"
	"fmt"
	"strings"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
)

// writeViews walks the products in subject order and writes their views:
// one goroutine gathers each product's scratch records (copies of their
// bytes), workers decode them and compute the views in parallel, this
// goroutine writes the views in subject order, and one more feeds the search
// index, so that Bleve's work overlaps the rest.
func (b *builder) writeViews(ctx context.Context) error {
	b.stage("views")
	if err := b.train(ctx); err != nil {
		return err
	}
	enc := b.out.Encoder()
	compute := func(bt []rawSubject) []subjectOut {
		out := b.computeAll(bt)
		var buf []byte
		for i := range out {
			buf = out[i].encode(enc, buf)
		}
		return out
	}
	// The search index takes the docs on its own goroutine. Bleve's builder
	// stops to turn every index.batchSize docs into a segment (most of a
	// second): the channel holds enough batches for the views to go on
	// meanwhile (about 30,000 docs, a few MiB); a short one would stall the
	// whole pipeline at every segment.
	docs := make(chan []index.Doc, docBatchesQueued)
	indexed := make(chan error, 1)
	go func() {
		var err error
		for batch := range docs {
			for _, d := range batch {
				if err == nil {
					if err = b.index.Add(d); err != nil {
						err = fmt.Errorf("index: %w", err)
					}
				}
			}
		}
		indexed <- err
	}()
	write := func(outs []subjectOut) error {
		var batch []index.Doc
		for i := range outs {
			if err := b.write(&outs[i]); err != nil {
				return err
			}
			if b.up == nil {
				batch = append(batch, outs[i].docs...)
			}
		}
		docs <- batch
		return nil
	}
	gather := func(ctx context.Context, emit func([]rawSubject) error) error { return b.gather(ctx, nil, emit) }
	err := ordered(ctx, gather, compute, write)
	close(docs)
	if ierr := <-indexed; err == nil {
		err = ierr
	}
	if err != nil {
		return err
	}
	return b.scratch.Flush()
}

// docBatchesQueued is how many batches of search index docs may wait for the
// index (see writeViews).
const docBatchesQueued = 512

// subjectsPerBatch is how many products travel together between stages.
const subjectsPerBatch = 64

// subjectOut is everything written for one product.
type subjectOut struct {
	subject string
	rejects []lineReject
	tenants []string // view tenants of a public product, for its aliases
	// views are the product's views, one set per visibility, until encode
	// turns them into entries.
	views   []visibleViews
	entries []kv.KeyValue
	docs    []index.Doc
	// kept and summary are what the kept records hold of the product
	// (appendKept, appendSummary), when records are kept.
	kept, summary []byte
	err           error
}

// visibleViews are the views of one visibility (tenant "" = public).
type visibleViews struct {
	tenant string
	views
}

// computeAll decodes a batch of products' records and computes their views.
// It runs on the workers.
func (b *builder) computeAll(bt []rawSubject) []subjectOut {
	out := make([]subjectOut, len(bt))
	for i := range bt {
		sd, err := b.decodeSubject(&bt[i])
		if err != nil {
			out[i] = subjectOut{subject: bt[i].subject, err: err}
			continue
		}
		out[i] = b.cat.compute(sd)
		if b.kept != nil && out[i].err == nil {
			out[i].kept = appendKept(nil, &bt[i])
			sum := summarize(sd, &out[i])
			out[i].summary = appendSummary(nil, &sum)
		}
	}
	return out
}

// encode turns o's views into the store's entries (an identity value for
// the point index, one compressed value of passport and evidence), on the
// workers, where the compression runs on every core, and gives the views'
// bodies back to their pools. buf is scratch, returned for the next call.
func (o *subjectOut) encode(enc *kv.Encoder, buf []byte) []byte {
	for i := range o.views {
		v := &o.views[i]
		buf = kv.AppendView(buf[:0], v.identity)
		o.entries = append(o.entries, enc.IdentityEntry(o.subject, v.tenant, buf))
		buf = kv.AppendView(buf[:0], v.passport)
		plen := len(buf)
		buf = kv.AppendView(buf, v.evidence)
		o.entries = append(o.entries, enc.ViewsEntry(o.subject, v.tenant, buf, plen))
		releaseBodies(&v.views)
	}
	o.views = nil
	return buf
}

// samplesWanted is how many products' identity views make the table of
// their shapes (kv.Builder.Train): with fewer, a few percent of the views
// have a shape no two samples share, and are stored piece by piece
// (kv/jsonshape). viewsSamples of them, the bottom of the sample, make the
// passport and evidence dictionary: a 128 KiB dictionary holds the last
// eight or so, and the rest are there for the inputs whose views are small.
const (
	samplesWanted = 4096
	viewsSamples  = 256
)

// train computes the views of the sampled products (b.sample: a spread over
// all the products, whatever their order) and gives them to the store's
// builder, which makes its dictionaries of them. Their late rejects are
// reported by the views stage proper, which computes them again.
func (b *builder) train(ctx context.Context) error {
	if from := b.opts.DictionariesFrom; from != "" {
		// Opened as served (its files checked as they are read), without
		// the point index's mapping: only its dictionary is read.
		prev, err := snapshots.Open(from, snapshots.OpenOptions{CacheBytes: 1 << 20, NoPoints: true})
		if err != nil {
			return fmt.Errorf("--dictionaries-from: %w", err)
		}
		d, err := prev.Dictionaries()
		prev.Close()
		if err != nil {
			return fmt.Errorf("--dictionaries-from: %w", err)
		}
		return b.out.TrainWith(d)
	}
	var s kv.Samples
	forViews := b.sample.smallest(viewsSamples)
	err := b.gather(ctx, b.sample.subjects(), func(bt []rawSubject) error {
		for _, o := range b.computeAll(bt) {
			if o.err != nil {
				return o.err
			}
			for i := range o.views {
				v := &o.views[i]
				s.Identity = append(s.Identity, kv.AppendView(nil, v.identity))
				if forViews[o.subject] {
					s.Passport = append(s.Passport, kv.AppendView(nil, v.passport))
					s.Evidence = append(s.Evidence, kv.AppendView(nil, v.evidence))
				}
				releaseBodies(&v.views)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return b.out.Train(s)
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
		if tenant == "" {
			v.identity.Tenants, v.passport.Tenants, v.evidence.Tenants = tenants, tenants, tenants
		}
		out.views = append(out.views, visibleViews{tenant, v})
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

// write reports a product's late rejects and writes its views and view
// tenants (writeViews hands the index documents to the index).
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
		if err := b.scratch.Set(workKey(tagViewTenants, o.subject), []byte(strings.Join(o.tenants, "\x00"))); err != nil {
			return err
		}
	}
	if err := b.keepSubject(o); err != nil {
		return err
	}
	b.summary.Views += int64(len(o.docs))
	if b.up != nil {
		return b.up.stage(b, o)
	}
	// The two tables each get their entries in key order: per visibility,
	// identity and then passport with evidence; tables are separate, so
	// interleaving is fine.
	for _, e := range o.entries {
		if err := b.out.Set(e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}
