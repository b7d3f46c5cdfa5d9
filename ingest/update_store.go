package ingest

import (
	"bytes"
	"fmt"
	"github.com/productdata/pds/domain"
	"slices"

	"github.com/productdata/pds/index"
	"github.com/productdata/pds/ingest/scratch"
	"github.com/productdata/pds/kv"
)

// stage keeps a computed product's store entries and index docs in the
// scratch store, for writeNightViews and feedIndex.
func (u *update) stage(b *builder, o *subjectOut) error {
	for _, e := range o.entries {
		if err := b.scratch.Set(append([]byte{tagStaged, 0}, e.Key...), e.Value); err != nil {
			return err
		}
	}
	s, err := decodeSummary(o.subject, o.summary)
	if err != nil {
		return err
	}
	u.computed.add(&s)
	return b.scratch.Set(workKey(tagStagedDocs, o.subject), appendSummary(nil, &summary{index: o.docs}))
}

// staged walks a scratch table in key order beside a sorted walk of the
// base's kept records (feedIndex): before each base entry, until hands emit
// the staged entries whose keys (without their table prefix) sort before
// it.
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

// droppedIdentifiers lists, sorted and distinct, the identifiers the base's
// products of subjects (the dropped ones) had, from their kept records: the
// keys of their aliases in the base's store.
//
// The subjects are sought in order with one iterator: a Get for each read
// the top-level index of the base's largest records table again (11 GB at
// 10,000,000 products, its index zstd-compressed), 24 s for a night of
// 10,000 products.
func (u *update) droppedIdentifiers(subjects []string) (out []string, err error) {
	it, err := u.baseRec.NewIter([]byte{keptSubject, 0})
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	for _, subject := range subjects {
		key := workKey(keptSubject, subject)
		if !it.SeekGE(key) || !bytes.Equal(it.Key(), key) {
			continue // not a product of the base (or a read that failed: Close says)
		}
		rs, err := decodeKept(subject, it.Value())
		if err != nil {
			return nil, err
		}
		var prod domain.Product
		if _, _, err := decodeRecord(rs.product, &prod); err != nil {
			return nil, err
		}
		out = append(out, prod.Identifiers...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
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

// feedIndex gives the search index the night's docs in subject order. An
// index that keeps its base (ix.KeepsBase) is told only what changed: the
// base's docs of every kept product stay as the base index stores them,
// each computed product's docs are added, and each dropped product's base
// docs dropped, so the kept products' records are not read. An index built
// whole (its base is of an older format) is given every product's docs: the
// kept ones' from the base's records, the computed ones' as staged.
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
	if !ix.KeepsBase() {
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
	dropped := b.up.night().Dropped
	ok := it.First()
	for ok || len(dropped) > 0 {
		// The next subject the night computed or dropped (or both).
		var subject string
		if ok {
			subject = string(it.Key()[2:])
		}
		computed := ok
		if len(dropped) > 0 && (!ok || dropped[0] <= subject) {
			if !ok || dropped[0] < subject {
				subject, computed = dropped[0], false
			}
			dropped = dropped[1:]
		}
		if err := ix.KeepBaseBefore(subject); err != nil {
			return err
		}
		if computed {
			if err := add(it.Key()[2:], it.Value()); err != nil {
				return err
			}
			ok = it.Next()
		}
		if err := ix.DropBase(subject); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	return ix.KeepBaseRest()
}
