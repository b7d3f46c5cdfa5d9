package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/ingest/records"
	"github.com/productdata/pds/ingest/scratch"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
)

// An incremental build (Options.Base) reads a change set: the products
// added or changed, each whole (its product line, claims, evidence and
// verdicts), the sources, parties and documents added or changed, and
// deletions.ndjson. It computes the views of those products, and of every
// kept product whose views cite a changed source, party or document, with
// the base's compression dictionaries; every other product's views, aliases
// and search index docs are copied from the base as they are. Its answers
// are those of a full build of the merged input (TestIncrementalEqualsFull).

// FileDeletions lists the products an incremental build removes, one
// {"identifier": …} a line (any of the product's identifiers).
const FileDeletions = "deletions.ndjson"

// Scratch tables of an incremental build, read in key order only.
const (
	// tagStaged: a store key -> its value, for the products computed.
	tagStaged byte = 'n'
	// tagStagedDocs: canonical subject -> its search index docs
	// (appendSummary with only the docs).
	tagStagedDocs byte = 'x'
)

// deletion is one line of deletions.ndjson.
type deletion struct {
	Identifier string `json:"identifier"`
}

func checkDeletion(d *deletion) *reject {
	c, r := canonicalSubject("identifier", d.Identifier)
	if r != nil {
		return r
	}
	d.Identifier = c
	return nil
}

// update is the state of an incremental build.
type update struct {
	base        *snapshots.Snapshot
	baseRec     *records.Store
	baseCounts  keptCounts
	baseSources map[string][]byte // each source of the base, as JSON
	baseParties map[string][]byte
	// baseSource is each source of the base as it was, before the change
	// set's lines replaced any.
	baseSource map[string]*domain.Source
	// replaced and deleted are the base's products that the change set
	// restates or deletes, with the line that did; replayed are those
	// computed again because what they cite changed.
	replaced, deleted map[string]int
	replayed          map[string]bool
	// changeDocs are the documents of the change set; changedDocs those of
	// them the base had; imported the base's documents copied into the
	// scratch store for the views computed.
	changeDocs, changedDocs, imported map[string]bool
	newDocs                           int64
	// dropped counts what the base's replaced, deleted and replayed
	// products had; computed what the products computed have.
	dropped, computed summaryCounts
	rebuildAll        bool
	changedSources    []string
	kvNight           *kv.Night // see night
}

// summaryCounts sums products' summaries.
type summaryCounts struct {
	products, claims, evidence, verdicts, views int64
}

func (c *summaryCounts) add(s *summary) {
	c.products++
	c.claims += s.counts[0]
	c.evidence += s.counts[1]
	c.verdicts += s.counts[2]
	c.views += s.views
}

// openBase opens the base snapshot and its kept records, and starts the
// catalog from the base's sources and parties.
func (b *builder) openBase() error {
	if b.opts.DictionariesFrom != "" {
		return errors.New("--dictionaries-from: an incremental build (--base) uses its base's dictionaries")
	}
	base, err := snapshots.Open(b.opts.Base, snapshots.OpenOptions{CacheBytes: 64 << 20})
	if err != nil {
		return fmt.Errorf("--base: %w", err)
	}
	rec, err := records.Open(recordsDir(b.opts.Base))
	if err != nil {
		base.Close()
		if errors.Is(err, records.ErrMissing) {
			return fmt.Errorf("--base %s: its records were not kept (no %s); build it with --keep-records, or incrementally", b.opts.Base, recordsDir(b.opts.Base))
		}
		return fmt.Errorf("--base: %w", err)
	}
	u := &update{base: base, baseRec: rec, baseSources: map[string][]byte{}, baseParties: map[string][]byte{}, baseSource: map[string]*domain.Source{},
		replaced: map[string]int{}, deleted: map[string]int{}, replayed: map[string]bool{},
		changeDocs: map[string]bool{}, changedDocs: map[string]bool{}, imported: map[string]bool{}}
	b.up = u
	var cat keptCatalog
	if err := readMeta(rec, metaCatalog, &cat); err != nil {
		return fmt.Errorf("--base: %w", err)
	}
	if err := readMeta(rec, metaCounts, &u.baseCounts); err != nil {
		return fmt.Errorf("--base: %w", err)
	}
	for _, p := range cat.Parties {
		b.parties[p.ID] = p
		u.baseParties[p.ID], _ = json.Marshal(p)
	}
	for _, s := range cat.Sources {
		b.cat.sources[s.ID] = s
		u.baseSource[s.ID] = s
		u.baseSources[s.ID], _ = json.Marshal(s)
	}
	b.opts.DictionariesFrom = b.opts.Base
	openedBase(recordsDir(b.opts.Base))
	return nil
}

// openedBase is called with the base's records folder once the base is
// open and checked: a test damages the records there, as a disk could
// between the check and the reads.
var openedBase = func(records string) {}

func (u *update) close() {
	u.base.Close()
	u.baseRec.Close()
}

// dropped reports whether the base's product subject is not kept as it is.
func (u *update) isDropped(subject string) bool {
	if _, ok := u.replaced[subject]; ok {
		return true
	}
	if _, ok := u.deleted[subject]; ok {
		return true
	}
	return u.replayed[subject]
}

func (b *builder) applyDeletion(p parsed, n int) *reject {
	d := p.v.(*deletion)
	a, ok, err := b.up.base.Alias(d.Identifier)
	if err != nil {
		return failed(fmt.Errorf("--base: read the alias of %s: %w", d.Identifier, err))
	}
	if !ok {
		return rejectf("identifier %s names no product of the base build", d.Identifier)
	}
	if line, dup := b.up.deleted[a.Subject]; dup {
		return rejectf("product %s is deleted by line %d already", a.Subject, line)
	}
	b.up.deleted[a.Subject] = n
	return nil
}

// replaces checks a product of the change set against the base: its
// identifiers may name one product of the base (which it then replaces)
// or none (it is new).
func (u *update) replaces(prod *domain.Product, n int) (string, *reject) {
	var subject string
	for _, id := range prod.Identifiers {
		a, ok, err := u.base.Alias(id)
		if err != nil {
			return "", failed(fmt.Errorf("--base: read the alias of %s: %w", id, err))
		}
		if !ok {
			continue
		}
		if subject != "" && a.Subject != subject {
			return "", rejectf("identifiers name two products of the base build, %s and %s; a change set replaces one product a line", subject, a.Subject)
		}
		subject = a.Subject
	}
	if subject == "" {
		return "", nil
	}
	if line, dup := u.replaced[subject]; dup {
		return "", rejectf("product %s of the base build is restated by line %d already", subject, line)
	}
	return subject, nil
}

// baseProduct names, in a reject, the base's product that subject names.
func (u *update) baseProduct(subject string) (string, bool, error) {
	a, ok, err := u.base.Alias(subject)
	if err != nil {
		return "", false, fmt.Errorf("--base: read the alias of %s: %w", subject, err)
	}
	return a.Subject, ok, nil
}

// notRestated is the reject of a claim or verdict of a kept product.
func notRestated(subject, product string) *reject {
	return rejectf("subject %s names product %s of the base build, which this change set does not restate in %s (a change set holds each product it changes whole)", subject, product, FileProducts)
}

// baseDocument reads a document of the base; its record and its source's
// tenant. Only a document the base does not keep is absent: a read that
// fails, or a record that does not decode, is the error.
func (b *builder) baseDocument(id string) ([]byte, string, bool, error) {
	rec, ok, err := b.up.baseRec.Get(kv.Key(keptDoc, id), nil)
	if err != nil || !ok {
		return nil, "", false, err
	}
	var d domain.Document
	if _, _, err := decodeRecord(rec, &d); err != nil {
		return nil, "", false, fmt.Errorf("--base: the kept record of document %s (key %q): %w", id, kv.Key(keptDoc, id), err)
	}
	tenant := ""
	if s := b.cat.sources[d.SourceID]; s != nil {
		tenant = s.Tenant
	}
	return rec, tenant, true, nil
}

// baseDoc is a base document's record and its source's tenant.
type baseDoc struct {
	rec    []byte
	tenant string
}

// baseDocReaders is how many reads of base documents a batch of evidence
// has in flight: the kept records are read at random, and when the page
// cache does not hold them (a base built the night before), one read at a
// time waits on the disk for each.
const baseDocReaders = 16

// baseDocuments reads the base's documents that evidence evs names and the
// change set does not hold (docs), baseDocReaders at a time.
func (b *builder) baseDocuments(evs []*domain.Evidence, docs map[string]refFound) (map[string]baseDoc, error) {
	var ids []string
	for _, e := range evs {
		if !docs[e.DocumentID].ok {
			ids = append(ids, e.DocumentID)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	found := make([]baseDoc, len(ids))
	ok := make([]bool, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range min(baseDocReaders, len(ids)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ids); i = int(next.Add(1) - 1) {
				found[i].rec, found[i].tenant, ok[i], errs[i] = b.baseDocument(ids[i])
			}
		})
	}
	wg.Wait()
	out := make(map[string]baseDoc, len(ids))
	for i, id := range ids {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if ok[i] {
			out[id] = found[i]
		}
	}
	return out, nil
}

// importDocument copies a base document into the scratch store, for the
// views of the products whose evidence names it.
func (b *builder) importDocument(id string, rec []byte) error {
	if b.up.imported[id] || b.up.changeDocs[id] {
		return nil
	}
	b.up.imported[id] = true
	line, _ := binary.Uvarint(rec)
	tenant := ""
	var d domain.Document
	if _, _, err := decodeRecord(rec, &d); err == nil {
		if s := b.cat.sources[d.SourceID]; s != nil {
			tenant = s.Tenant
		}
	}
	v := binary.AppendUvarint(append([]byte(tenant), 0), line)
	if err := b.scratch.Set(kv.Key(tagDocument, id), v); err != nil {
		return err
	}
	return b.scratch.Set(kv.Key(tagDocRecord, id), rec)
}

// noteDocument records a document of the change set: new, or replacing
// one of the base (whose citing products are then computed again). A read
// of the base's record that fails is the error: taken for a new document,
// the products citing the old one would keep their stale views.
func (b *builder) noteDocument(id string, rec []byte) error {
	b.up.changeDocs[id] = true
	old, ok, err := b.up.baseRec.Get(kv.Key(keptDoc, id), nil)
	if err != nil {
		return fmt.Errorf("--base: %w", err)
	}
	if !ok {
		b.up.newDocs++
		return nil
	}
	if !bytes.Equal(recordBody(old), recordBody(rec)) {
		b.up.changedDocs[id] = true
	}
	return nil
}

// recordBody is a scratch record without its line number.
func recordBody(rec []byte) []byte {
	_, n := binary.Uvarint(rec)
	if n <= 0 {
		return rec
	}
	return rec[n:]
}

// coverageChanged reports whether a source's change (old is nil for a new
// source) may change the coverage of products that do not cite it: every
// passport names the sources that cover its subject.
func coverageChanged(old, s *domain.Source) bool {
	if old == nil {
		return s.Covers != nil
	}
	if old.Covers == nil && s.Covers == nil {
		return false
	}
	return coverageKey(old) != coverageKey(s)
}

// coverageKey is what of a source a product's coverage depends on.
func coverageKey(s *domain.Source) string {
	j, _ := json.Marshal(struct {
		Tenant  string
		Covers  *domain.Covers
		Enabled bool
	}{s.Tenant, s.Covers, s.IsEnabled()})
	return string(j)
}

// plan decides, once the change set is read, which kept products must be
// computed again, and copies their records into the scratch store.
func (b *builder) plan() error {
	u := b.up
	changed := map[string]bool{}
	changedParties := map[string]bool{}
	for id, p := range b.parties {
		if j, _ := json.Marshal(p); !bytes.Equal(j, u.baseParties[id]) {
			changedParties[id] = true
		}
	}
	for id, s := range b.cat.sources {
		if coverageChanged(u.baseSource[id], s) {
			u.rebuildAll = true
		}
		if j, _ := json.Marshal(s); !bytes.Equal(j, u.baseSources[id]) || s.OperatorPartyID != nil && changedParties[*s.OperatorPartyID] {
			changed[id] = true
			u.changedSources = append(u.changedSources, id)
		}
	}
	slices.Sort(u.changedSources)
	// The base's products that are gone count as dropped (once: a product
	// may be deleted and restated both).
	// In key order: the kept records are read at each, and in order the
	// reads of a base the page cache does not hold are closer together.
	gone := slices.Sorted(maps.Keys(u.replaced))
	for subject := range u.deleted {
		if _, restated := u.replaced[subject]; !restated {
			gone = append(gone, subject)
		}
	}
	slices.Sort(gone)
	for _, subject := range gone {
		if err := u.drop(b, subject); err != nil {
			return err
		}
	}
	if !u.rebuildAll && len(changed) == 0 && len(u.changedDocs) == 0 {
		return nil
	}
	var replay []string
	err := u.baseRec.Scan([]byte{keptSummary, 0}, func(key, value []byte) error {
		subject := string(key[2:])
		if u.isDropped(subject) {
			return nil
		}
		if !u.rebuildAll {
			s, err := decodeSummary(subject, value)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(s.sources, func(id string) bool { return changed[id] }) &&
				!slices.ContainsFunc(s.docs, func(id string) bool { return u.changedDocs[id] }) {
				return nil
			}
		}
		replay = append(replay, subject)
		return nil
	})
	if err != nil {
		return err
	}
	for _, subject := range replay {
		if err := u.drop(b, subject); err != nil {
			return err
		}
		u.replayed[subject] = true
		if err := b.replay(subject); err != nil {
			return err
		}
	}
	return b.scratch.Flush()
}

// drop counts what the base had of subject, and removes its records from
// the build's kept records (a product computed again writes them anew).
func (u *update) drop(b *builder, subject string) error {
	v, ok, err := u.baseRec.Get(kv.Key(keptSummary, subject), nil)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("--base: the kept records have no %s", subject)
	}
	s, err := decodeSummary(subject, v)
	if err != nil {
		return err
	}
	u.dropped.add(&s)
	if err := b.kept.Delete(kv.Key(keptSubject, subject)); err != nil {
		return err
	}
	return b.kept.Delete(kv.Key(keptSummary, subject))
}

// replay copies a kept product's records into the scratch store, as the
// input phases would have written them.
func (b *builder) replay(subject string) error {
	blob, ok, err := b.up.baseRec.Get(kv.Key(keptSubject, subject), nil)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("--base: the kept records have no %s", subject)
	}
	rs, err := decodeKept(subject, blob)
	if err != nil {
		return err
	}
	var prod domain.Product
	line, _, err := decodeRecord(rs.product, &prod)
	if err != nil {
		return err
	}
	for _, id := range prod.Identifiers {
		if err := b.scratch.Set(kv.Key(tagAlias, id), appendOwned(nil, subject, prod.Tenant, line)); err != nil {
			return err
		}
	}
	if err := b.scratch.Set(kv.Key(tagProduct, subject), rs.product); err != nil {
		return err
	}
	for _, v := range rs.claims {
		var c domain.Claim
		if _, _, err := decodeRecord(v, &c); err != nil {
			return err
		}
		if err := b.scratch.Set(kv.Key(tagClaim, subject, c.ID), v); err != nil {
			return err
		}
	}
	for _, v := range rs.evidence {
		var e domain.Evidence
		if _, _, err := decodeRecord(v, &e); err != nil {
			return err
		}
		if err := b.scratch.Set(kv.Key(tagEvidence, subject, e.ClaimID, e.ID), v); err != nil {
			return err
		}
		if err := b.scratch.Set(kv.Key(tagDocUse, e.DocumentID, subject), nil); err != nil {
			return err
		}
		if !b.up.changeDocs[e.DocumentID] && !b.up.imported[e.DocumentID] {
			rec, _, ok, err := b.baseDocument(e.DocumentID)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("--base: the kept records have no document %s (of %s)", e.DocumentID, subject)
			}
			if err := b.importDocument(e.DocumentID, rec); err != nil {
				return err
			}
		}
	}
	for _, v := range rs.verdicts {
		n, k := binary.Uvarint(v)
		if k <= 0 {
			return fmt.Errorf("kept records of %s: %w", subject, errCorruptRecord)
		}
		var seq [8]byte
		binary.BigEndian.PutUint64(seq[:], n)
		if err := b.scratch.Set(kv.Key(tagVerdict, subject, string(seq[:])), v); err != nil {
			return err
		}
	}
	return nil
}

// stage keeps a computed product's store entries and index docs in the
// scratch store, for mergeStore and feedIndex.
func (u *update) stage(b *builder, o *subjectOut) error {
	for _, e := range o.entries {
		if err := b.scratch.Set(append([]byte{tagStaged, 0}, e.key...), e.value); err != nil {
			return err
		}
	}
	s, err := decodeSummary(o.subject, o.summary)
	if err != nil {
		return err
	}
	u.computed.add(&s)
	return b.scratch.Set(kv.Key(tagStagedDocs, o.subject), appendSummary(nil, &summary{index: o.docs}))
}

// staged walks a scratch table in key order beside a sorted walk of the
// base, for the merges of an incremental build: before each base entry,
// until hands emit the staged entries whose keys (without their table
// prefix) sort before it.
type staged struct {
	it   *scratch.Iter
	ok   bool
	emit func(key, value []byte) error
}

func newStaged(it *scratch.Iter, emit func(key, value []byte) error) *staged {
	return &staged{it: it, ok: it.First(), emit: emit}
}

// until emits the staged entries before limit (all of them: nil).
func (s *staged) until(limit []byte) error {
	for ; s.ok && (limit == nil || bytes.Compare(s.it.Key()[2:], limit) < 0); s.ok = s.it.Next() {
		if err := s.emit(s.it.Key()[2:], s.it.Value()); err != nil {
			return err
		}
	}
	return nil
}

// finish emits the rest, once the base's walk ended with err.
func (s *staged) finish(err error) error {
	if err == nil {
		err = s.until(nil)
	}
	if err == nil {
		err = s.it.Error()
	}
	return err
}

// droppedSubjects lists the base's products not kept as they are
// (isDropped), in order.
func (u *update) droppedSubjects() []string {
	var out []string
	for s := range u.replaced {
		out = append(out, s)
	}
	for s := range u.deleted {
		if _, ok := u.replaced[s]; !ok {
			out = append(out, s)
		}
	}
	for s := range u.replayed {
		out = append(out, s)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// night is what the store's writer is told of the base (kv.Night), made
// once the change set is planned.
func (u *update) night() *kv.Night {
	if u.kvNight == nil {
		u.kvNight = &kv.Night{Base: u.base, Dropped: u.droppedSubjects(), IsDropped: u.isDropped}
	}
	return u.kvNight
}

// writeNightViews writes the view tables of the new store: the base's
// views of the products kept, and the staged views of those computed.
func (b *builder) writeNightViews() error {
	it, err := b.scratch.NewIter([]byte{tagStaged, 0})
	if err != nil {
		return err
	}
	defer it.Close()
	return b.out.WriteNightViews(b.up.night(), &sortedScratch{it: it})
}

// sortedScratch walks a scratch table for the store's writer (kv.Sorted):
// its keys without the scratch table's prefix, its values as stored, or as
// value makes them of the stored ones.
type sortedScratch struct {
	it      *scratch.Iter
	started bool
	value   func(stored []byte) ([]byte, error)
}

func (s *sortedScratch) Next() bool {
	if !s.started {
		s.started = true
		return s.it.First()
	}
	return s.it.Next()
}

func (s *sortedScratch) Key() []byte { return s.it.Key()[2:] }

func (s *sortedScratch) Value() ([]byte, error) {
	if s.value == nil {
		return s.it.Value(), nil
	}
	return s.value(s.it.Value())
}

func (s *sortedScratch) Err() error { return s.it.Error() }

// feedIndex gives the search index every product's docs in subject order:
// the kept ones' from the base's records, the computed ones' as staged.
func (b *builder) feedIndex(ix *index.Builder) error {
	it, err := b.scratch.NewIter([]byte{tagStagedDocs, 0})
	if err != nil {
		return err
	}
	defer it.Close()
	add := func(subject, v []byte) error {
		s, err := decodeSummary(string(subject), v)
		if err != nil {
			return err
		}
		for _, d := range s.index {
			if err := ix.Add(d); err != nil {
				return fmt.Errorf("index: %w", err)
			}
		}
		return nil
	}
	st := newStaged(it, add)
	return st.finish(b.up.baseRec.Scan([]byte{keptSummary, 0}, func(k, v []byte) error {
		subject := k[2:]
		if b.up.isDropped(string(subject)) {
			return nil
		}
		if err := st.until(subject); err != nil {
			return err
		}
		return add(subject, v)
	}))
}

// counts is the new build's manifest counts: the base's, less what the
// products dropped had, plus what those computed have.
func (u *update) counts(b *builder) map[string]int64 {
	c := map[string]int64{}
	for k, v := range u.baseCounts {
		c[k] = v
	}
	delta := func(name string, minus, plus int64) { c[name] += plus - minus }
	delta(FileProducts, u.dropped.products, u.computed.products)
	delta(FileClaims, u.dropped.claims, u.computed.claims)
	delta(FileEvidence, u.dropped.evidence, u.computed.evidence)
	delta(FileVerdicts, u.dropped.verdicts, u.computed.verdicts)
	delta("views", u.dropped.views, u.computed.views)
	c[FileDocuments] += u.newDocs
	c[FileParties] = int64(len(b.parties))
	c[FileSources] = int64(len(b.cat.sources))
	return c
}

// inputDigest is the new build's input digest: of the base's and the
// change set's.
func (u *update) inputDigest(changes string) string {
	h := sha256.Sum256(fmt.Appendf(nil, "pds incremental build\n%s\n%s\n", u.base.Manifest.InputDigest, changes))
	return "sha256:" + hex.EncodeToString(h[:])
}
