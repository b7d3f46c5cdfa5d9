package kv

import (
	"bytes"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// Scratch is a throwaway writable store that ingest uses as its external
// sort: records are written in input order and read back in key order, so
// memory stays bounded whatever the input size.
type Scratch struct {
	dir   string
	db    *pebble.DB
	batch *pebble.Batch
}

// batchBytes is how much a scratch batch holds before it is committed.
const batchBytes = 4 << 20

// OpenScratch creates a scratch store at dir (removed by Close).
func OpenScratch(dir string) (*Scratch, error) {
	// Reads are point lookups, mostly of absent keys (duplicate checks): bloom
	// filters answer those without reading a block; no compression, and a
	// cache, keep the hits cheap. The bulk of the reading is one ordered pass
	// over each table: larger blocks (32 KiB) mean fewer block reads for it.
	cache := pebble.NewCache(256 << 20)
	defer cache.Unref()
	opts := &pebble.Options{DisableWAL: true, MemTableSize: 64 << 20, Logger: pebbleLogger{}, Cache: cache,
		L0CompactionThreshold: 8, L0StopWritesThreshold: 64}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		opts.Levels[i].BlockSize = 32 << 10
		opts.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
	}
	opts.EnsureDefaults()
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("scratch: %w", err)
	}
	return &Scratch{dir: dir, db: db, batch: newScratchBatch(db)}, nil
}

// newScratchBatch returns a batch sized for batchBytes, whose buffer is kept
// across commits (Flush resets it), so that it is not regrown each time.
func newScratchBatch(db *pebble.DB) *pebble.Batch {
	return db.NewBatch(pebble.WithInitialSizeBytes(batchBytes+batchBytes/4), pebble.WithMaxRetainedSizeBytes(2*batchBytes))
}

// Set writes key and value (copied). Writes become readable after Flush.
func (s *Scratch) Set(key, value []byte) error {
	if err := s.batch.Set(key, value, nil); err != nil {
		return fmt.Errorf("scratch: %w", err)
	}
	if s.batch.Len() >= batchBytes {
		return s.Flush()
	}
	return nil
}

// Flush commits pending writes.
func (s *Scratch) Flush() error {
	if s.batch.Empty() {
		return nil
	}
	if err := s.batch.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("scratch: %w", err)
	}
	s.batch.Reset()
	return nil
}

// Get copies the value of key into dst[:0]; pending writes are seen. The
// batch is not indexed (writes are cheaper so), so Get commits the pending
// writes first: callers ask only when an in-memory filter says the key may
// exist, which is rare.
func (s *Scratch) Get(key, dst []byte) ([]byte, bool, error) {
	if err := s.Flush(); err != nil {
		return dst, false, err
	}
	dst, ok, err := copyValue(s.db.Get, key, dst)
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
type ScratchReader struct{ it *pebble.Iterator }

// NewReader returns a ScratchReader over what is committed now.
func (s *Scratch) NewReader() (*ScratchReader, error) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return nil, fmt.Errorf("scratch: %w", err)
	}
	return &ScratchReader{it: it}, nil
}

// Get copies the value of key into dst[:0]; ok is false when key is absent.
// It seeks by prefix, which lets the tables' bloom filters answer for the
// absent keys as a Get would (the key is its own prefix: the default
// comparer has no suffixes).
func (r *ScratchReader) Get(key, dst []byte) ([]byte, bool, error) {
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
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, fmt.Errorf("scratch: %w", err)
	}
	return &Iter{it: it}, nil
}

// First, Next, Valid, Key and Value mirror pebble.Iterator.
func (i *Iter) First() bool   { return i.it.First() }
func (i *Iter) Next() bool    { return i.it.Next() }
func (i *Iter) Valid() bool   { return i.it.Valid() }
func (i *Iter) Key() []byte   { return i.it.Key() }
func (i *Iter) Value() []byte { return i.it.Value() }

// SeekGE moves to the first key at or after key.
func (i *Iter) SeekGE(key []byte) bool { return i.it.SeekGE(key) }

// Close closes the iterator.
func (i *Iter) Close() error { return i.it.Close() }

// Close closes and removes the scratch store.
func (s *Scratch) Close() error {
	s.batch.Close()
	err := s.db.Close()
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	return err
}
