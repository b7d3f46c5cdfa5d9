package kv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// Scratch is a throwaway writable store that ingest uses as its external
// sort: records are written in input order and read back in key order, so
// memory stays bounded whatever the input size.
//
// It is two Pebble stores. The lookup store holds the tables that are read
// by key while the input is read (ids, for duplicates and references): it
// compacts, as Pebble does, so that a point read looks into few tables. The
// ordered store holds the tables named at open, which are written once and
// then read only in key order, each in one pass: it never compacts. Each of
// its memtables is flushed to a sorted table in L0 and stays there, and the
// ordered pass merges them, as the merge phase of an external sort does.
// Compacting them, only to read them once, was most of what the scratch
// store cost (see OpenScratch).
type Scratch struct {
	dir string
	db  *pebble.DB // the lookup store
	// ordered is the ordered store; nil when no table was named.
	ordered     *pebble.DB
	orderedTags [256]bool      // by a key's first byte, its table's tag
	w           *ScratchWriter // the batches of Set
}

// batchBytes is how much a scratch batch holds before it is committed.
const batchBytes = 4 << 20

// OpenScratch creates a scratch store at dir (removed by Close). The tables
// whose keys start with one of the ordered tags are kept in the ordered
// store: they must not be read by key through a ScratchReader (Get reads
// them, slowly: every flushed table).
//
// Why two stores: in one store, at 1,000,000 generated products, the
// compactions that kept the id tables fit for point reads also rewrote the
// records of claims, evidence and verdicts two to three times over (write
// amplification 3.1), and the records outweigh the ids many times. Without
// compactions at all, every point read looked into dozens of L0 tables
// (round six, BENCHMARKS.md). Split, each table gets what its reads need.
func OpenScratch(dir string, ordered ...byte) (*Scratch, error) {
	// Lookup store. Reads are point lookups, mostly of absent keys
	// (duplicate checks): bloom filters answer those without reading a
	// block; no compression, and a cache, keep the hits cheap. 32 KiB
	// blocks: neighbouring ids of a batch's sorted lookups share them, and
	// an ingest that names no ordered table (the Open Food Facts importer's)
	// reads in order here too.
	cache := pebble.NewCache(192 << 20)
	defer cache.Unref()
	opts := scratchOptions(cache, 64<<20)
	opts.L0CompactionThreshold, opts.L0StopWritesThreshold = 8, 64
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	opts.EnsureDefaults()
	db, err := pebble.Open(filepath.Join(dir, "lookup"), opts)
	if err != nil {
		return nil, fmt.Errorf("scratch: %w", err)
	}
	s := &Scratch{dir: dir, db: db}
	s.w = s.NewWriter()
	if len(ordered) == 0 {
		return s, nil
	}
	// Ordered store: no compactions, and no limit on L0 (Pebble would stop
	// the writes at L0StopWritesThreshold tables). No bloom filters: nothing
	// is read by key.
	//
	// Its memtables, and the lookup store's cache, are smaller than one
	// store's were (64 and 256 MiB), to keep the two stores' memory where
	// the one's was: with both at the old sizes, 1,000,000-product builds
	// peaked at 937 to 1,029 MiB (one store: 836 and 888); as they are, at
	// 827 and 833 MiB, as fast within the noise.
	//
	// Its own small cache: sharing the lookup store's, the blocks of the
	// ordered pass and of its flushes pushed the lookup store's filter
	// blocks out, and the evidence file's lookups read them from disk again
	// (a 200,000-product build's evidence stage took 20 s instead of 5 to 7).
	ocache := pebble.NewCache(8 << 20)
	defer ocache.Unref()
	oopts := scratchOptions(ocache, 32<<20)
	oopts.DisableAutomaticCompactions = true
	oopts.L0CompactionThreshold, oopts.L0StopWritesThreshold = 1<<20, 1<<20
	oopts.EnsureDefaults()
	if s.ordered, err = pebble.Open(filepath.Join(dir, "ordered"), oopts); err != nil {
		db.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("scratch: %w", err)
	}
	for _, t := range ordered {
		s.orderedTags[t] = true
	}
	return s, nil
}

// scratchOptions returns what both scratch stores share: no write-ahead
// log, no compression, 32 KiB blocks, the cache and the memtable size. The
// caller sets the rest, then calls EnsureDefaults.
func scratchOptions(cache *pebble.Cache, memTable uint64) *pebble.Options {
	opts := &pebble.Options{DisableWAL: true, MemTableSize: memTable, Logger: pebbleLogger{}, Cache: cache}
	for i := range opts.Levels {
		opts.Levels[i].BlockSize = 32 << 10
		opts.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
	}
	return opts
}

// isOrdered reports whether key's table is in the ordered store.
func (s *Scratch) isOrdered(key []byte) bool { return len(key) > 0 && s.orderedTags[key[0]] }

// store returns the store that holds the table of key.
func (s *Scratch) store(key []byte) *pebble.DB {
	if s.isOrdered(key) {
		return s.ordered
	}
	return s.db
}

// newScratchBatch returns a batch sized for batchBytes, whose buffer is kept
// across commits (Flush resets it), so that it is not regrown each time.
func newScratchBatch(db *pebble.DB) *pebble.Batch {
	return db.NewBatch(pebble.WithInitialSizeBytes(batchBytes+batchBytes/4), pebble.WithMaxRetainedSizeBytes(2*batchBytes))
}

// Set writes key and value (copied). Writes become readable after Flush.
// Not safe for concurrent use: a goroutine of its own writes through a
// ScratchWriter.
func (s *Scratch) Set(key, value []byte) error { return s.w.Set(key, value) }

// commit commits batch's pending writes, if any, and resets it (nil: no batch yet).
func commit(batch *pebble.Batch) error {
	if batch == nil || batch.Empty() {
		return nil
	}
	if err := batch.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("scratch: %w", err)
	}
	batch.Reset()
	return nil
}

// Flush commits the pending writes of Set, to both stores.
func (s *Scratch) Flush() error { return s.w.Flush() }

// Get copies the value of key into dst[:0]; pending writes are seen. The
// batch is not indexed (writes are cheaper so), so Get commits the pending
// writes first: callers ask only when an in-memory filter says the key may
// exist, which is rare.
func (s *Scratch) Get(key, dst []byte) ([]byte, bool, error) {
	if err := s.Flush(); err != nil {
		return dst, false, err
	}
	dst, ok, err := copyValue(s.store(key).Get, key, dst)
	if err != nil {
		err = fmt.Errorf("scratch: %w", err)
	}
	return dst, ok, err
}

// ScratchReader reads committed records by key through one iterator: a
// pebble.DB.Get builds and tears down an iterator stack on every call, which
// cost about as much as the lookup itself when ingest made one per input
// line. It sees what was committed when it was made, and nothing written
// after. Not safe for concurrent use; Close it when done.
// It reads the lookup store only.
type ScratchReader struct {
	it      *pebble.Iterator
	ordered *[256]bool
}

// NewReader returns a ScratchReader over what is committed now.
func (s *Scratch) NewReader() (*ScratchReader, error) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return nil, fmt.Errorf("scratch: %w", err)
	}
	return &ScratchReader{it: it, ordered: &s.orderedTags}, nil
}

// ErrOrderedByKey is what a ScratchReader answers for a key of a table kept
// in the ordered store, which is not read by key.
var ErrOrderedByKey = errors.New("scratch: a table of the ordered store is read in order, not by key")

// Get copies the value of key into dst[:0]; ok is false when key is absent.
// It seeks by prefix, which lets the tables' bloom filters answer for the
// absent keys as a Get would (the key is its own prefix: the default
// comparer has no suffixes).
func (r *ScratchReader) Get(key, dst []byte) ([]byte, bool, error) {
	if len(key) > 0 && r.ordered[key[0]] {
		return dst[:0], false, ErrOrderedByKey
	}
	if !r.it.SeekPrefixGE(key) || !bytes.Equal(r.it.Key(), key) {
		if err := r.it.Error(); err != nil {
			return dst[:0], false, fmt.Errorf("scratch: %w", err)
		}
		return dst[:0], false, nil
	}
	v, err := r.it.ValueAndErr()
	if err != nil {
		return dst[:0], false, fmt.Errorf("scratch: %w", err)
	}
	return append(dst[:0], v...), true, nil
}

// Close closes the reader.
func (r *ScratchReader) Close() error { return r.it.Close() }

// Iter is an iterator over the keys with one prefix, in order.
type Iter struct{ it *pebble.Iterator }

// NewIter returns an iterator over keys starting with prefix. Pending writes
// must be flushed first.
func (s *Scratch) NewIter(prefix []byte) (*Iter, error) {
	return s.NewRangeIter(prefix, prefixEnd(prefix))
}

// First, Next, Valid, Key and Value mirror pebble.Iterator.
func (i *Iter) First() bool   { return i.it.First() }
func (i *Iter) Next() bool    { return i.it.Next() }
func (i *Iter) Valid() bool   { return i.it.Valid() }
func (i *Iter) Key() []byte   { return i.it.Key() }
func (i *Iter) Value() []byte { return i.it.Value() }

// NewRangeIter returns an iterator over the keys in [lower, upper), which
// must be of one table. Pending writes must be flushed first.
func (s *Scratch) NewRangeIter(lower, upper []byte) (*Iter, error) {
	it, err := s.store(lower).NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("scratch: %w", err)
	}
	return &Iter{it: it}, nil
}

// Error is the error that ended the iteration early, if any.
func (i *Iter) Error() error { return i.it.Error() }

// SeekGE moves to the first key at or after key.
func (i *Iter) SeekGE(key []byte) bool { return i.it.SeekGE(key) }

// Close closes the iterator.
func (i *Iter) Close() error { return i.it.Close() }

// ScratchWriter writes to the scratch store through batches of its own, so
// that several goroutines may write at once (Scratch.Set writes through one
// too, the store's). Writes become readable after Flush; Close releases the
// batches.
type ScratchWriter struct {
	s *Scratch
	// lookup and ordered batch the writes to each store, made by the first.
	lookup, ordered *pebble.Batch
}

// NewWriter returns a writer of its own.
func (s *Scratch) NewWriter() *ScratchWriter { return &ScratchWriter{s: s} }

// Set writes key and value (copied).
func (w *ScratchWriter) Set(key, value []byte) error {
	batch := &w.lookup
	if w.s.isOrdered(key) {
		batch = &w.ordered
	}
	if *batch == nil {
		*batch = newScratchBatch(w.s.store(key))
	}
	if err := (*batch).Set(key, value, nil); err != nil {
		return fmt.Errorf("scratch: %w", err)
	}
	if (*batch).Len() >= batchBytes {
		return commit(*batch)
	}
	return nil
}

// Flush commits the pending writes.
func (w *ScratchWriter) Flush() error {
	for _, batch := range []*pebble.Batch{w.lookup, w.ordered} {
		if err := commit(batch); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the batches; writes not flushed are dropped.
func (w *ScratchWriter) Close() {
	for _, batch := range []*pebble.Batch{w.lookup, w.ordered} {
		if batch != nil {
			batch.Close()
		}
	}
}

// Close closes and removes the scratch store.
func (s *Scratch) Close() error {
	s.w.Close()
	err := s.db.Close()
	if s.ordered != nil {
		if cerr := s.ordered.Close(); err == nil {
			err = cerr
		}
	}
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	return err
}
