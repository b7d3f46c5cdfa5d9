package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/productdata/pds/domain"
)

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
	v, ok, err := u.baseRec.Get(workKey(keptSummary, subject), nil)
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
	if err := b.kept.Delete(workKey(keptSubject, subject)); err != nil {
		return err
	}
	return b.kept.Delete(workKey(keptSummary, subject))
}

// replay copies a kept product's records into the scratch store, as the
// input phases would have written them.
func (b *builder) replay(subject string) error {
	blob, ok, err := b.up.baseRec.Get(workKey(keptSubject, subject), nil)
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
		if err := b.scratch.Set(workKey(tagAlias, id), appendOwned(nil, subject, prod.Tenant, line)); err != nil {
			return err
		}
	}
	if err := b.scratch.Set(workKey(tagProduct, subject), rs.product); err != nil {
		return err
	}
	for _, v := range rs.claims {
		var c domain.Claim
		if _, _, err := decodeRecord(v, &c); err != nil {
			return err
		}
		if err := b.scratch.Set(workKey(tagClaim, subject, c.ID), v); err != nil {
			return err
		}
	}
	for _, v := range rs.evidence {
		var e domain.Evidence
		if _, _, err := decodeRecord(v, &e); err != nil {
			return err
		}
		if err := b.scratch.Set(workKey(tagEvidence, subject, e.ClaimID, e.ID), v); err != nil {
			return err
		}
		if err := b.scratch.Set(workKey(tagDocUse, e.DocumentID, subject), nil); err != nil {
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
		if err := b.scratch.Set(workKey(tagVerdict, subject, string(seq[:])), v); err != nil {
			return err
		}
	}
	return nil
}
