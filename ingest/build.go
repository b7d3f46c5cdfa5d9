package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/ingest/scratch"
	"github.com/productdata/pds/internal/progress"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
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

// stageJoin is the stage that gives each product its documents.
const stageJoin = "document join"

// joinDocuments writes, for each product, the documents its evidence names
// (tagSubjectDoc), so that the views read them in subject order with the
// product's other records. The pairs (tagDocUse) come in document order and
// so do the documents: this is a merge of two ordered tables, each read
// once, where the views used to read each document by key, a random read
// of the scratch store that cost a tenth of a 1,000,000-product build. The
// documents' key range is cut into one part a core (joinSplits), each
// merged by a goroutine of its own.
func (b *builder) joinDocuments(ctx context.Context) error {
	b.stage(stageJoin)
	splits := joinSplits(b.docSample, joinParts())
	b.docSample = nil
	errs := make([]error, len(splits)+1)
	var wg sync.WaitGroup
	for i := range errs {
		var lo, hi []byte // nil: no bound
		if i > 0 {
			lo = splits[i-1]
		}
		if i < len(splits) {
			hi = splits[i]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.joinRange(ctx, lo, hi)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// joinParts is how many parts the document join is cut into: one a core.
var joinParts = func() int { return runtime.GOMAXPROCS(0) }

// joinSplits returns up to parts-1 document ids that cut the sampled ids
// (taken while the documents were read) into parts of about equal size.
// An id with a zero byte is never a split: the pairs' keys join the id and
// the subject with one, so a pair of a shorter id could sort past it.
func joinSplits(sample []string, parts int) [][]byte {
	sample = slices.DeleteFunc(sample, func(id string) bool { return strings.IndexByte(id, 0) >= 0 })
	slices.Sort(sample)
	var splits [][]byte
	for k := 1; k < parts && len(sample) > 0; k++ {
		id := []byte(sample[k*len(sample)/parts])
		if n := len(splits); n == 0 || bytes.Compare(splits[n-1], id) < 0 {
			splits = append(splits, id)
		}
	}
	return splits
}

// joinRange joins the pairs and documents whose document ids are in [lo, hi)
// (a nil bound is open), writing through a batch of its own.
func (b *builder) joinRange(ctx context.Context, lo, hi []byte) error {
	bounds := func(tag byte) (lower, upper []byte) {
		lower = append([]byte{tag, 0}, lo...)
		if hi == nil {
			return lower, []byte{tag, 1}
		}
		return lower, append([]byte{tag, 0}, hi...)
	}
	uses, err := b.scratch.NewRangeIter(bounds(tagDocUse))
	if err != nil {
		return err
	}
	defer uses.Close()
	docs, err := b.scratch.NewRangeIter(bounds(tagDocRecord))
	if err != nil {
		return err
	}
	defer docs.Close()
	w := b.scratch.NewWriter()
	defer w.Close()
	docs.First()
	var docKey, key []byte
	found := false
	for ok := uses.First(); ok; ok = uses.Next() {
		if b.count.Add(1)%(1<<16) == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		// The subject is canonical (no zero byte); the document id is
		// everything before it.
		k := uses.Key()[2:]
		cut := bytes.LastIndexByte(k, 0)
		if cut < 0 {
			return fmt.Errorf("scratch store: malformed key %q", uses.Key())
		}
		doc, subject := k[:cut], k[cut+1:]
		if len(docKey) < 2 || !bytes.Equal(docKey[2:], doc) {
			docKey = append(append(docKey[:0], tagDocRecord, 0), doc...)
			found = seekForward(docs, docKey)
		}
		if !found {
			return fmt.Errorf("document %s vanished from scratch store", doc)
		}
		key = append(append(append(append(key[:0], tagSubjectDoc, 0), subject...), 0), doc...)
		if err := w.Set(key, docs.Value()); err != nil {
			return err
		}
	}
	if err := errors.Join(uses.Error(), docs.Error()); err != nil {
		return fmt.Errorf("scratch store: %w", err)
	}
	return w.Flush()
}

// seekForward moves it to key and reports whether key is there. The table
// is in many runs (the ordered store does not compact), where a seek
// positions every run again; nearly every document has a pair, so the next
// one is usually a few steps forward. (Not always forward: an id with a zero
// byte sorts its pairs before those of the id that is its prefix.)
func seekForward(it *scratch.Iter, key []byte) bool {
	for range 8 {
		if !it.Valid() || bytes.Compare(it.Key(), key) > 0 {
			break
		}
		if bytes.Equal(it.Key(), key) {
			return true
		}
		it.Next()
	}
	return it.SeekGE(key) && bytes.Equal(it.Key(), key)
}

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
	// meanwhile (about 30,000 docs, a few MiB), where a short one stalled
	// the whole pipeline at every segment.
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
	entries []kvEntry
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

// kvEntry is one value to write to the store, as the store holds it.
type kvEntry struct {
	key, value []byte
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
		o.entries = append(o.entries, kvEntry{kv.AppendViewKey(nil, kv.TagIdentity, o.subject, v.tenant), enc.Identity(buf)})
		buf = kv.AppendView(buf[:0], v.passport)
		plen := len(buf)
		buf = kv.AppendView(buf, v.evidence)
		o.entries = append(o.entries, kvEntry{kv.AppendViewKey(nil, kv.TagViews, o.subject, v.tenant), enc.Views(buf, plen)})
		releaseBodies(&v.views)
	}
	o.views = nil
	return buf
}

// samplesWanted is how many products' views make the store's compression
// dictionaries (kv.Builder.Train): a 128 KiB dictionary holds the last
// eight or so, and the rest are there for the inputs whose views are small.
const samplesWanted = 256

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
	err := b.gather(ctx, b.sample.subjects(), func(bt []rawSubject) error {
		for _, o := range b.computeAll(bt) {
			if o.err != nil {
				return o.err
			}
			for i := range o.views {
				v := &o.views[i]
				s.Identity = append(s.Identity, kv.AppendView(nil, v.identity))
				s.Passport = append(s.Passport, kv.AppendView(nil, v.passport))
				s.Evidence = append(s.Evidence, kv.AppendView(nil, v.evidence))
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
			key = kv.AppendKey(key[:0], tagProduct, subjects[next])
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
		if err := b.scratch.Set(kv.Key(tagViewTenants, o.subject), []byte(strings.Join(o.tenants, "\x00"))); err != nil {
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
		if err := b.out.Set(e.key, e.value); err != nil {
			return err
		}
	}
	return nil
}

// writeAliases writes one alias per product identifier, in identifier order:
// those of the scratch store, with the view tenants of their public
// products; in an incremental build, merged with the base's aliases of the
// products it keeps (which are written as they are).
func (b *builder) writeAliases() error {
	it, err := b.scratch.NewIter([]byte{tagAlias, 0})
	if err != nil {
		return err
	}
	defer it.Close()
	if err := b.scratch.Flush(); err != nil {
		return err
	}
	tenants, err := b.scratch.NewReader()
	if err != nil {
		return err
	}
	defer tenants.Close()
	var val, tv []byte
	// value is the alias of a staged entry, in val.
	value := func(v []byte) ([]byte, error) {
		c, owner, _ := splitOwned(v)
		a := kv.Alias{Subject: string(c), Owner: string(owner)}
		if a.Owner == "" {
			var found bool
			var gerr error
			if tv, found, gerr = tenants.Get(kv.Key(tagViewTenants, a.Subject), tv); gerr != nil {
				return nil, gerr
			}
			if found {
				a.ViewTenants = strings.Split(string(tv), "\x00")
			}
		}
		val = kv.AppendAlias(val[:0], a)
		return val, nil
	}
	var night *kv.Night
	if b.up != nil {
		night = b.up.night()
	}
	return b.out.WriteAliases(night, &sortedScratch{it: it, value: value})
}

// writeSources writes every source with its operator.
func (b *builder) writeSources() error {
	entries := make([]kv.Entry, 0, len(b.cat.sourceList))
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
		entries = append(entries, kv.Entry{Name: s.ID, Value: j})
	}
	return b.out.WriteSources(entries)
}

// writeMeta writes the store's metadata: the cursor key, derived from the
// input digest and the sequence (cursorKey). The build id is the manifest's
// alone: in the store it made every build's bytes differ.
func (b *builder) writeMeta() error {
	return b.out.WriteMeta([]kv.Entry{{Name: kv.MetaCursorKey, Value: b.cursorKey()}})
}

// cursorKey is SHA-256("pds cursor key", input digest, sequence): the same
// for the same input and sequence, as every byte of the store is. It was 32
// random bytes; either way anyone holding the snapshot holds the key, and
// now so does anyone holding its input files and sequence, which the API
// never shows (docs/snapshots.md).
func (b *builder) cursorKey() []byte {
	sum := sha256.Sum256(fmt.Appendf(nil, "pds cursor key\x00%s\x00%d", b.digest.String(), b.opts.Sequence))
	return sum[:]
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
		fmt.Fprintln(b.opts.Progress, progressLine(name, n-last, n, now.Sub(lastAt), now.Sub(b.stageStart())))
		last, lastAt = n, now
	})
}

// progressLine is one progress line: the stage, its records so far (total)
// and their rate (done in the last interval); a stage that counts no
// records says what it does and how long it has run instead of "0/s".
func progressLine(stage string, done, total int64, interval, running time.Duration) string {
	if what, ok := finishingStages[stage]; ok {
		return fmt.Sprintf("ingest: %s: %s (%s)", stage, what, running.Truncate(time.Second))
	}
	return fmt.Sprintf("ingest: %s: %d records (%.0f/s)", stage, total, float64(done)/interval.Seconds())
}

// The stages after the views, which count no records; finishingStages says
// what each does, for the progress lines.
const (
	stageFinishing = "finishing"
	stageManifest  = "manifest"
	stagePublish   = "publish"
)

var finishingStages = map[string]string{
	stageFinishing: "merging the search index and writing the store's last tables",
	stageManifest:  "checksumming the snapshot's files",
	stagePublish:   "syncing the snapshot to disk",
}

// stage starts the stage name: the progress lines name it, its records are
// counted from zero, and the summary gets its duration.
func (b *builder) stage(name string) {
	now := time.Now()
	b.stageMu.Lock()
	if n := len(b.summary.Stages); n > 0 && b.summary.Stages[n-1].Duration == 0 {
		b.summary.Stages[n-1].Duration = now.Sub(b.stageAt)
	}
	if name != "" {
		b.summary.Stages = append(b.summary.Stages, StageTime{Name: name})
	}
	b.stageAt = now
	b.stageMu.Unlock()
	b.current.Store(name)
	b.count.Store(0)
}

// stageStart is when the current stage started.
func (b *builder) stageStart() time.Time {
	b.stageMu.Lock()
	defer b.stageMu.Unlock()
	return b.stageAt
}
