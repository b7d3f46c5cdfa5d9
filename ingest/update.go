package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest/records"
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
	openRecords := records.OpenListed
	if b.opts.CheckBaseWhole {
		openRecords = records.Open
	}
	rec, err := openRecords(recordsDir(b.opts.Base))
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

// isDropped reports whether the base's product subject is not kept as it
// is.
func (u *update) isDropped(subject string) bool {
	if _, ok := u.replaced[subject]; ok {
		return true
	}
	if _, ok := u.deleted[subject]; ok {
		return true
	}
	return u.replayed[subject]
}

// applyDeletion records a line of deletions.ndjson (line n): the base's
// product its identifier names is deleted.
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
