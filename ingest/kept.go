package ingest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/ingest/records"
	"github.com/productdata/pds/snapshots"
)

// The records a build keeps for the next, incremental build (package
// records), in NAME.records beside the snapshot NAME. Keys are a tag, a zero
// byte and the parts (appendWorkKey).
const (
	// keptSubject: canonical subject -> the product's accepted records as
	// the scratch store held them (appendKept).
	keptSubject byte = 'R'
	// keptSummary: canonical subject -> what its views counted and cite,
	// and its search index docs (appendSummary).
	keptSummary byte = 'X'
	// keptDoc: document id -> the document's scratch record.
	keptDoc byte = 'D'
	// keptMeta: name -> JSON (keptCatalog, keptCounts).
	keptMeta byte = 'M'
)

const (
	metaCatalog = "catalog"
	metaCounts  = "counts"
)

// recordsDir is where the records of the snapshot at out are kept.
func recordsDir(out string) string { return filepath.Clean(out) + ".records" }

// keptCatalog is the sources and parties, kept whole: every build holds
// them in memory anyway.
type keptCatalog struct {
	Parties []*domain.Party  `json:"parties"`
	Sources []*domain.Source `json:"sources"`
}

// keptCounts is what the manifest counts of the kept build: accepted
// records per input file, and views.
type keptCounts map[string]int64

// appendKept appends a product's records: the product, then the claims,
// the evidence and the verdicts, each list as a count and each record as a
// length and its bytes. Documents are kept once each (keptDoc).
func appendKept(dst []byte, rs *rawSubject) []byte {
	dst = appendBytes(dst, rs.product)
	for _, list := range [][][]byte{rs.claims, rs.evidence, rs.verdicts} {
		dst = binary.AppendUvarint(dst, uint64(len(list)))
		for _, v := range list {
			dst = appendBytes(dst, v)
		}
	}
	return dst
}

// decodeKept reads what appendKept wrote; the slices point into b.
func decodeKept(subject string, b []byte) (rawSubject, error) {
	rs := rawSubject{subject: subject}
	d := keptReader{b: b}
	rs.product = d.bytes()
	lists := []*[][]byte{&rs.claims, &rs.evidence, &rs.verdicts}
	for _, list := range lists {
		n := d.uvarint()
		for i := uint64(0); i < n && d.err == nil; i++ {
			*list = append(*list, d.bytes())
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return rs, fmt.Errorf("kept records of %s: %w", subject, errCorruptRecord)
	}
	return rs, nil
}

// summary is what is kept of one product's build besides its records.
type summary struct {
	counts  [3]int64 // claims, evidence and verdicts accepted
	views   int64
	sources []string // every source its claims and documents name
	docs    []string // every document its evidence names
	index   []index.Doc
}

func appendSummary(dst []byte, s *summary) []byte {
	for _, n := range s.counts {
		dst = binary.AppendUvarint(dst, uint64(n))
	}
	dst = binary.AppendUvarint(dst, uint64(s.views))
	dst = appendStrings(dst, s.sources)
	dst = appendStrings(dst, s.docs)
	dst = binary.AppendUvarint(dst, uint64(len(s.index)))
	for _, d := range s.index {
		dst = appendString(dst, d.Manufacturer)
		dst = appendString(dst, d.Brand)
		dst = binary.AppendUvarint(dst, uint64(d.TrustLevel))
		passport := byte(0)
		if d.HasPassport {
			passport = 1
		}
		dst = append(dst, passport)
		dst = appendString(dst, d.UpdatedAt.Format(time.RFC3339Nano))
		dst = appendString(dst, d.Visibility)
		dst = appendStrings(dst, d.ShadowedFor)
	}
	return dst
}

func decodeSummary(subject string, b []byte) (summary, error) {
	var s summary
	d := keptReader{b: b}
	for i := range s.counts {
		s.counts[i] = int64(d.uvarint())
	}
	s.views = int64(d.uvarint())
	s.sources = d.strings()
	s.docs = d.strings()
	n := d.uvarint()
	for i := uint64(0); i < n && d.err == nil; i++ {
		doc := index.Doc{Subject: subject, Manufacturer: d.string(), Brand: d.string(), TrustLevel: int(d.uvarint())}
		doc.HasPassport = d.byte() == 1
		if t := d.string(); d.err == nil {
			var err error
			if doc.UpdatedAt, err = time.Parse(time.RFC3339Nano, t); err != nil {
				d.err = err
			}
		}
		doc.Visibility = d.string()
		doc.ShadowedFor = d.strings()
		s.index = append(s.index, doc)
	}
	if d.err != nil || len(d.b) != 0 {
		return s, fmt.Errorf("kept summary of %s: %w", subject, errCorruptRecord)
	}
	return s, nil
}

// summarize is o's summary: sd's counts (compute has taken its late
// rejects out of sd), what it cites, and its index docs.
func summarize(sd *subjectData, o *subjectOut) summary {
	s := summary{counts: [3]int64{int64(len(sd.claims)), 0, int64(len(sd.verdicts))}, views: int64(len(o.docs)), index: o.docs}
	docs := map[string]bool{}
	sources := map[string]bool{}
	for _, evs := range sd.evidence {
		s.counts[1] += int64(len(evs))
		for _, e := range evs {
			docs[e.ev.DocumentID] = true
		}
	}
	for _, cr := range sd.claims {
		if cr.claim.SourceRef != nil {
			sources[*cr.claim.SourceRef] = true
		}
	}
	for _, d := range sd.docs {
		sources[d.SourceID] = true
	}
	for id := range docs {
		s.docs = append(s.docs, id)
	}
	for id := range sources {
		s.sources = append(s.sources, id)
	}
	slices.Sort(s.docs)
	slices.Sort(s.sources)
	return s
}

func appendBytes(dst, v []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(v))), v...)
}

func appendString(dst []byte, v string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(v))), v...)
}

func appendStrings(dst []byte, vs []string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(vs)))
	for _, v := range vs {
		dst = appendString(dst, v)
	}
	return dst
}

// keptReader reads what the append functions above wrote; the first error
// sticks.
type keptReader struct {
	b   []byte
	err error
}

func (d *keptReader) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorruptRecord
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *keptReader) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if uint64(len(d.b)) < n {
		d.err = errCorruptRecord
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *keptReader) string() string { return string(d.bytes()) }

func (d *keptReader) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errCorruptRecord
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *keptReader) strings() []string {
	n := d.uvarint()
	var out []string
	for i := uint64(0); i < n && d.err == nil; i++ {
		out = append(out, d.string())
	}
	return out
}

// keepSubject writes o's records and summary to the kept records (o.kept
// and o.summary were made by the workers).
func (b *builder) keepSubject(o *subjectOut) error {
	if b.kept == nil || o.kept == nil {
		return nil
	}
	if err := b.kept.Set(workKey(keptSubject, o.subject), o.kept); err != nil {
		return err
	}
	return b.kept.Set(workKey(keptSummary, o.subject), o.summary)
}

// keepDocuments writes every document of the scratch store to the kept
// records: all of them in a full build, the change set's (and those
// imported from the base, unchanged) in an incremental one.
func (b *builder) keepDocuments() error {
	it, err := b.scratch.NewIter([]byte{tagDocRecord, 0})
	if err != nil {
		return err
	}
	defer it.Close()
	var key []byte
	for ok := it.First(); ok; ok = it.Next() {
		key = append(append(key[:0], keptDoc, 0), it.Key()[2:]...)
		if err := b.kept.Set(key, it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

// keepMeta writes the catalog and the counts.
func (b *builder) keepMeta(counts map[string]int64) error {
	var c keptCatalog
	for _, p := range b.parties {
		c.Parties = append(c.Parties, p)
	}
	slices.SortFunc(c.Parties, func(x, y *domain.Party) int { return strings.Compare(x.ID, y.ID) })
	c.Sources = b.cat.sourceList
	// In key order: a new store's tables are written sorted.
	for _, m := range []struct {
		name string
		v    any
	}{{metaCatalog, c}, {metaCounts, counts}} {
		name, v := m.name, m.v
		j, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := b.kept.Set(workKey(keptMeta, name), j); err != nil {
			return err
		}
	}
	return nil
}

// readMeta reads one of keptMeta's values into v.
func readMeta(r *records.Store, name string, v any) error {
	j, ok, err := r.Get(workKey(keptMeta, name), nil)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("kept records: no %s", name)
	}
	return json.Unmarshal(j, v)
}

// createKept starts the build's kept records, empty or a copy of the
// base's, in a temporary folder beside where they go (named and locked as
// the snapshot's is, so that a killed build's is removed by the next).
func (b *builder) createKept(id string) error {
	final := recordsDir(b.opts.Out)
	if _, err := os.Stat(final); err == nil {
		return fmt.Errorf("kept records: %s exists", final)
	}
	t, err := snapshots.ClaimTemp(final, id)
	if err != nil {
		return err
	}
	b.keptTemp = t
	if b.up != nil {
		b.kept, err = b.up.baseRec.Copy(t.Path)
	} else {
		b.kept, err = records.Create(t.Path)
	}
	if err != nil {
		t.Release()
		b.keptTemp = nil
	}
	return err
}

// finishKept writes the catalog and counts and closes the kept records (Run
// renames them into place once the snapshot is).
func (b *builder) finishKept(counts map[string]int64) error {
	if err := b.keepMeta(counts); err != nil {
		return err
	}
	err := b.kept.Close()
	b.kept = nil
	return err
}
