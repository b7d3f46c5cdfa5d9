package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/productdata/pds/ingest/scratch"
)

// stageJoin is the stage that gives each product its documents.
const stageJoin = "document join"

// joinDocuments writes, for each product, the documents its evidence names
// (tagSubjectDoc), so that the views read them in subject order with the
// product's other records. The pairs (tagDocUse) come in document order and
// so do the documents: this is a merge of two ordered tables, each read
// once. Reading each document by key from the views instead would be a
// random read of the scratch store, a tenth of a 1,000,000-product build. The
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
