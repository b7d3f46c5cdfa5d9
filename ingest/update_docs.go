package ingest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/productdata/pds/domain"
)

// baseDocument reads a document of the base; its record and its source's
// tenant. Only a document the base does not keep is absent: a read that
// fails, or a record that does not decode, is the error.
func (b *builder) baseDocument(id string) ([]byte, string, bool, error) {
	rec, ok, err := b.up.baseRec.Get(workKey(keptDoc, id), nil)
	if err != nil || !ok {
		return nil, "", false, err
	}
	var d domain.Document
	if _, _, err := decodeRecord(rec, &d); err != nil {
		return nil, "", false, fmt.Errorf("--base: the kept record of document %s (key %q): %w", id, workKey(keptDoc, id), err)
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
	if err := b.scratch.Set(workKey(tagDocument, id), v); err != nil {
		return err
	}
	return b.scratch.Set(workKey(tagDocRecord, id), rec)
}

// noteDocument records a document of the change set: new, or replacing
// one of the base (whose citing products are then computed again). A read
// of the base's record that fails is the error: taken for a new document,
// the products citing the old one would keep their stale views.
func (b *builder) noteDocument(id string, rec []byte) error {
	b.up.changeDocs[id] = true
	old, ok, err := b.up.baseRec.Get(workKey(keptDoc, id), nil)
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
