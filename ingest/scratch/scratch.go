package scratch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/productdata/pds/internal/pebbleutil"
)

// Store is a throwaway writable store that ingest uses as its external
// sort: records are written in input order and read back in key order, so
// memory stays bounded whatever the input size.
//
// It has two parts. The lookup store, a Pebble store, holds the tables that
// are read by key while the input is read (ids, for duplicates and
// references): it compacts, as Pebble does, so that a point read looks into
// few tables. The ordered store holds the tables named at open, which are
// written once and then read only in key order, each in one pass: it is an
// external sort of its own (runStore), whose sorted runs are merged by each
// ordered pass and never compacted.
type Store struct {
	dir string
	db  *pebble.DB // the lookup store
	// ordered is the ordered store; nil when no table was named.
	ordered     *runStore
	orderedTags [256]bool // by a key's first byte, its table's tag
	w           *Writer   // the batches of Set
}

// batchBytes is how much a scratch batch holds before it is committed.
const batchBytes = 4 << 20

// Open creates a scratch store at dir (removed by Close). The tables
// whose keys start with one of the ordered tags are kept in the ordered
// store: they must not be read by key through a Reader (Get reads
// them, slowly: it merges every run).
//
// Why two stores: in one Pebble store, at 1,000,000 generated products, the
// compactions that kept the id tables fit for point reads also rewrote the
// records of claims, evidence and verdicts two to three times over (write
// amplification 3.1), and the records outweigh the ids many times. Without
// compactions at all, every point read looks into dozens of L0 tables
// (BENCHMARKS.md). Split, each table gets what its reads need.
func Open(dir string, ordered ...byte) (*Store, error) {
	// Lookup store. Reads are point lookups, mostly of absent keys
	// (duplicate checks): bloom filters answer those without reading a
	// block; the cache, which holds blocks decoded, keeps the hits cheap
	// (Snappy, scratchOptions). 32 KiB
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
	s := &Store{dir: dir, db: db}
	s.w = s.NewWriter()
	if len(ordered) == 0 {
		return s, nil
	}
	// Ordered store: runs of 32 MiB, the size of the Pebble memtables it
	// replaced, so that memory stays where it was (two runs at most: one
	// gathering, one being written).
	if s.ordered, err = openRunStore(filepath.Join(dir, "ordered"), runBytes); err != nil {
		db.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	for _, t := range ordered {
		s.orderedTags[t] = true
	}
	return s, nil
}

// scratchOptions returns the lookup store's options: no write-ahead log,
// Snappy blocks of 32 KiB, the cache and the memtable size. The caller sets
// the rest, then calls EnsureDefaults.
//
// Why Snappy: at 200,000 generated products it halves the store's disk
// peak (114 MB to 56 MB) for under half a per cent of a build's CPU; the
// id tables' blocks are decoded once into the cache, which the point reads
// hit. MinLZ, Pebble's fastest profile, needs the newest table format,
// whose blocks kept the store at 100 MB.
func scratchOptions(cache *pebble.Cache, memTable uint64) *pebble.Options {
	opts := &pebble.Options{DisableWAL: true, MemTableSize: memTable, Logger: pebbleutil.Logger{}, Cache: cache}
	for i := range opts.Levels {
		opts.Levels[i].BlockSize = 32 << 10
		opts.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.SnappyCompression }
	}
	return opts
}

// isOrdered reports whether key's table is in the ordered store.
func (s *Store) isOrdered(key []byte) bool { return len(key) > 0 && s.orderedTags[key[0]] }

// newBatch returns a batch sized for batchBytes, whose buffer is kept
// across commits (Flush resets it), so that it is not regrown each time.
func newBatch(db *pebble.DB) *pebble.Batch {
	return db.NewBatch(pebble.WithInitialSizeBytes(batchBytes+batchBytes/4), pebble.WithMaxRetainedSizeBytes(2*batchBytes))
}

// Set writes key and value (copied). Writes become readable after Flush.
// Not safe for concurrent use: a goroutine of its own writes through a
// Writer.
func (s *Store) Set(key, value []byte) error { return s.w.Set(key, value) }

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
func (s *Store) Flush() error { return s.w.Flush() }

// Get copies the value of key into dst[:0]; pending writes are seen. The
// batch is not indexed (writes are cheaper so), so Get commits the pending
// writes first: callers ask only when an in-memory filter says the key may
// exist, which is rare. A key of the ordered store is found by merging
// every run, which is slow.
func (s *Store) Get(key, dst []byte) ([]byte, bool, error) {
	if s.isOrdered(key) {
		if err := s.Flush(); err != nil {
			return dst, false, err
		}
		it, err := s.NewRangeIter(key, append(bytes.Clone(key), 0))
		if err != nil {
			return dst, false, err
		}
		defer it.Close()
		if !it.First() {
			return dst[:0], false, it.Error()
		}
		return append(dst[:0], it.Value()...), true, nil
	}
	// Only the lookup store's pending writes: committing the ordered
	// store's on every Get would cut its runs into chunks of a few entries.
	if err := commit(s.w.lookup); err != nil {
		return dst, false, err
	}
	dst, ok, err := pebbleutil.CopyValue(s.db.Get, key, dst)
	if err != nil {
		err = fmt.Errorf("scratch: %w", err)
	}
	return dst, ok, err
}

// Reader reads committed records by key through one iterator: a
// pebble.DB.Get builds and tears down an iterator stack on every call, which
// cost about as much as the lookup itself when ingest made one per input
// line. It sees what was committed when it was made, and nothing written
// after. Not safe for concurrent use; Close it when done.
// It reads the lookup store only.
type Reader struct {
	it      *pebble.Iterator
	ordered *[256]bool
}

// NewReader returns a Reader over what is committed now.
func (s *Store) NewReader() (*Reader, error) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return nil, fmt.Errorf("scratch: %w", err)
	}
	return &Reader{it: it, ordered: &s.orderedTags}, nil
}

// ErrOrderedByKey is what a Reader answers for a key of a table kept
// in the ordered store, which is not read by key.
var ErrOrderedByKey = errors.New("scratch: a table of the ordered store is read in order, not by key")

// Get copies the value of key into dst[:0]; ok is false when key is absent.
// It seeks by prefix, which lets the tables' bloom filters answer for the
// absent keys as a Get would (the key is its own prefix: the default
// comparer has no suffixes).
func (r *Reader) Get(key, dst []byte) ([]byte, bool, error) {
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
func (r *Reader) Close() error { return r.it.Close() }

// Iter is an iterator over the keys in a range, in order: of the lookup
// store (a Pebble iterator) or of the ordered store (a merge of its runs,
// runMerge). First, Next, Valid, Key, Value, Error, SeekGE and Close mirror
// pebble.Iterator.
type Iter struct{ rangeIter }

// rangeIter is what both kinds of iterator answer.
type rangeIter interface {
	First() bool
	Next() bool
	Valid() bool
	Key() []byte
	Value() []byte
	Error() error
	SeekGE(key []byte) bool
	Close() error
}

// NewIter returns an iterator over keys starting with prefix. Pending writes
// must be flushed first.
func (s *Store) NewIter(prefix []byte) (*Iter, error) {
	return s.NewRangeIter(prefix, pebbleutil.PrefixEnd(prefix))
}

// NewRangeIter returns an iterator over the keys in [lower, upper), which
// must be of one table. Pending writes must be flushed first. An iterator
// of the ordered store sees what was flushed when it was made.
func (s *Store) NewRangeIter(lower, upper []byte) (*Iter, error) {
	if s.isOrdered(lower) {
		runs, err := s.ordered.settle()
		if err != nil {
			return nil, err
		}
		return &Iter{newRunMerge(runs, lower, upper)}, nil
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("scratch: %w", err)
	}
	return &Iter{it}, nil
}

// Writer writes to the scratch store through batches of its own, so
// that several goroutines may write at once (Scratch.Set writes through one
// too, the store's). Writes become readable after Flush; Close releases the
// batches.
type Writer struct {
	s *Store
	// lookup batches the writes to the lookup store, made by the first.
	lookup *pebble.Batch
	// ordered stages the writes to the ordered store, made by the first.
	ordered *runChunk
}

// NewWriter returns a writer of its own.
func (s *Store) NewWriter() *Writer { return &Writer{s: s} }

// Set writes key and value (copied).
func (w *Writer) Set(key, value []byte) error {
	if w.s.isOrdered(key) {
		if w.ordered == nil {
			w.ordered = newChunk()
		}
		w.ordered.add(key, value)
		if w.ordered.size() >= chunkBytes {
			c := w.ordered
			w.ordered = nil
			return w.s.ordered.commit(c)
		}
		return nil
	}
	if w.lookup == nil {
		w.lookup = newBatch(w.s.db)
	}
	if err := w.lookup.Set(key, value, nil); err != nil {
		return fmt.Errorf("scratch: %w", err)
	}
	if w.lookup.Len() >= batchBytes {
		return commit(w.lookup)
	}
	return nil
}

// Flush commits the pending writes.
func (w *Writer) Flush() error {
	if err := commit(w.lookup); err != nil {
		return err
	}
	if w.ordered != nil {
		c := w.ordered
		w.ordered = nil
		return w.s.ordered.commit(c)
	}
	return nil
}

// Close releases the batches; writes not flushed are dropped.
func (w *Writer) Close() {
	if w.lookup != nil {
		w.lookup.Close()
	}
	if w.ordered != nil {
		chunkPool.Put(w.ordered)
		w.ordered = nil
	}
}

// Close closes and removes the scratch store.
func (s *Store) Close() error {
	s.w.Close()
	err := s.db.Close()
	if s.ordered != nil {
		if cerr := s.ordered.close(); err == nil {
			err = cerr
		}
	}
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	return err
}
