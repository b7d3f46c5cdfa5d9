package records

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/productdata/pds/internal/osfile"
	"github.com/productdata/pds/internal/pebbleutil"
)

// Store is an open records store.
//
// A new store (Create) is written table by table, each in key order (a
// table is a key's first byte), as sorted files that Close ingests whole:
// nothing is compacted. A copy (Copy) takes a night's few changes through
// batches, and never compacts either: a compaction would rewrite the kept
// tables whose keys the changes fall between (all of them, as changed
// products are spread over the keys), where each night adds a few small
// files instead.
type Store struct {
	dir      string
	db       *pebble.DB
	readOnly bool
	batch    *pebble.Batch
	// tables are the sorted files of a new store, by table.
	tables map[byte]*table
	// sums are the files of a store Open checked; linked those of a copy
	// that are its base's files, linked (Copy), whose sums are the base's.
	sums, linked map[string]fileSum
	// hashed is whether Open hashed every file (OpenListed does not).
	hashed bool
}

// table is one table's sorted file being written.
type table struct {
	w    *sstable.Writer
	path string
	last []byte
}

// batchBytes is how much a writable store's pending batch holds before it is
// committed.
const batchBytes = 16 << 20

func options() *pebble.Options {
	o := &pebble.Options{Logger: pebbleutil.Logger{}, EventListener: pebbleutil.Listener(), DisableWAL: true, DisableAutomaticCompactions: true}
	for i := range o.Levels {
		o.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.ZstdCompression }
	}
	o.EnsureDefaults()
	return o
}

// Create makes an empty store at dir, which must not exist or be empty.
func Create(dir string) (*Store, error) {
	if err := emptyDir(dir); err != nil {
		return nil, err
	}
	o := options()
	o.ErrorIfExists = true
	db, err := pebble.Open(dir, o)
	if err != nil {
		return nil, fmt.Errorf("records: create %s: %w", dir, err)
	}
	return &Store{dir: dir, db: db, tables: map[byte]*table{}}, nil
}

// Open checks every file of the store at dir against the checksums it was
// closed with (SumsName), reading each once, and opens it read-only. A
// store that fails the check is refused with an error that wraps
// ErrDamaged and names the file.
func Open(dir string) (*Store, error) { return open(dir, true) }

// OpenListed is Open without reading the files: the folder must hold
// exactly the files its SumsName lists, each of the size listed, but their
// bytes are left to Pebble, which checks each block's checksum as it reads
// it. A damaged block that is not read is linked forward (Copy) with its
// file's listed checksum, so a later Open, which hashes every file, still
// finds it. For a night, which reads the records of what changed only.
func OpenListed(dir string) (*Store, error) { return open(dir, false) }

func open(dir string, hash bool) (*Store, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("records: %s: %w", dir, ErrMissing)
	}
	sums, err := verifySums(dir, hash)
	if err != nil {
		return nil, err
	}
	o := options()
	o.ReadOnly = true
	o.ErrorIfNotExists = true
	db, err := pebble.Open(dir, o)
	if err != nil {
		return nil, fmt.Errorf("records: open %s: %w", dir, damage(err))
	}
	return &Store{dir: dir, db: db, readOnly: true, sums: sums, hashed: hash}, nil
}

// Copy makes a writable copy of s at dir (which must not exist). Pebble's
// tables are immutable, so they are hard-linked (copied across file
// systems); its other files, which a writable store changes, are copied. s
// is not changed by writes to the copy. (Pebble's own Checkpoint needs a
// writable store, and s is opened read-only so that a build never changes
// its base.)
func (s *Store) Copy(dir string) (*Store, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("records: copy %s: %w", s.dir, err)
	}
	if err := emptyDir(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("records: copy %s: %w", s.dir, err)
	}
	linked := map[string]fileSum{}
	for _, e := range entries {
		if e.IsDir() || !listed(e.Name()) {
			continue
		}
		from, to := filepath.Join(s.dir, e.Name()), filepath.Join(dir, e.Name())
		if pebbleutil.LinkTable(from, to) {
			if sum, ok := s.sums[e.Name()]; ok {
				linked[e.Name()] = sum
			}
			continue
		}
		if err := osfile.Copy(from, to); err != nil {
			return nil, fmt.Errorf("records: copy %s: %w", s.dir, err)
		}
		// A copy's checksum is its own at Close: one of bytes OpenListed
		// did not check must be the base's, or it would vouch for damage.
		if want, ok := s.sums[e.Name()]; ok && !s.hashed {
			got, err := sumFile(to)
			if err != nil {
				return nil, fmt.Errorf("records: copy %s: %w", s.dir, err)
			}
			if got != want {
				return nil, fmt.Errorf("records: %s: %w: file %s does not match its checksum in %s (changed or damaged since it was kept)", s.dir, ErrDamaged, e.Name(), SumsName)
			}
		}
	}
	db, err := pebble.Open(dir, options())
	if err != nil {
		return nil, fmt.Errorf("records: open %s: %w", dir, damage(err))
	}
	return &Store{dir: dir, db: db, linked: linked}, nil
}

// emptyDir checks that dir does not exist or is empty.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("records: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("records: %s is not empty", dir)
	}
	return nil
}

// damage returns err, wrapping ErrDamaged in one line that names the file
// when it is a corruption that Pebble found.
func damage(err error) error {
	if pebble.IsCorruptionError(err) {
		return fmt.Errorf("%w: %w", ErrDamaged, pebbleutil.Corruption(err))
	}
	return err
}

// readError is the error of a read of key (or of keys from key, a prefix).
func (s *Store) readError(key []byte, err error) error {
	return fmt.Errorf("records: %s: read key %q: %w", s.dir, key, damage(err))
}

// Get returns the value of key, appended to dst[:0]. Only an absent key is
// (dst[:0], false, nil); a read that fails is an error naming the store, the
// key and, for damage, the file.
func (s *Store) Get(key, dst []byte) ([]byte, bool, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return dst[:0], false, nil
	}
	if err != nil {
		return dst[:0], false, s.readError(key, err)
	}
	dst = append(dst[:0], v...)
	closer.Close()
	return dst, true, nil
}

// Scan calls fn for every key with prefix, in key order. The slices are
// valid only during the call. Writes not yet committed are not seen.
func (s *Store) Scan(prefix []byte, fn func(key, value []byte) error) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: pebbleutil.PrefixEnd(prefix)})
	if err != nil {
		return s.readError(prefix, err)
	}
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return s.readError(prefix, err)
	}
	return nil
}

// Iter is a pull iterator over one prefix, for merging with another sorted
// sequence.
type Iter struct {
	it     *pebble.Iterator
	s      *Store
	prefix []byte
}

// NewIter returns an iterator over the keys with prefix, positioned at the
// first.
func (s *Store) NewIter(prefix []byte) (*Iter, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: pebbleutil.PrefixEnd(prefix)})
	if err != nil {
		return nil, s.readError(prefix, err)
	}
	it.First()
	return &Iter{it: it, s: s, prefix: prefix}, nil
}

// SeekGE moves to the first key at or after key and reports whether there
// is one. Keys sought in increasing order share what the iterator has read
// of the tables' indexes; Get reads them again for each key.
func (i *Iter) SeekGE(key []byte) bool { return i.it.SeekGE(key) }

// Valid, Key, Value and Next are Pebble's.
func (i *Iter) Valid() bool   { return i.it.Valid() }
func (i *Iter) Key() []byte   { return i.it.Key() }
func (i *Iter) Value() []byte { return i.it.Value() }
func (i *Iter) Next() bool    { return i.it.Next() }

// Close closes the iterator and reports an error that ended it early.
func (i *Iter) Close() error {
	if err := i.it.Close(); err != nil {
		return i.s.readError(i.prefix, err)
	}
	return nil
}

// Set writes key with value. In a new store (Create), the keys of one table
// must come in increasing order; in a copy, in any order (committed in
// batches; Close commits the rest).
func (s *Store) Set(key, value []byte) error {
	if s.tables != nil {
		return s.setSorted(key, value)
	}
	if s.batch == nil {
		s.batch = s.db.NewBatch()
	}
	if err := s.batch.Set(key, value, nil); err != nil {
		return fmt.Errorf("records: %w", err)
	}
	return s.commitFull()
}

// setSorted adds key to its table's sorted file.
func (s *Store) setSorted(key, value []byte) error {
	if len(key) == 0 {
		return errors.New("records: empty key")
	}
	t := s.tables[key[0]]
	if t == nil {
		t = &table{path: filepath.Join(s.dir, fmt.Sprintf("table-%02x.sst.tmp", key[0]))}
		f, err := vfs.Default.Create(t.path, vfs.WriteCategoryUnspecified)
		if err != nil {
			return fmt.Errorf("records: %w", err)
		}
		opts := options()
		t.w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), opts.MakeWriterOptions(6, s.db.TableFormat()))
		s.tables[key[0]] = t
	}
	if t.last != nil && bytes.Compare(key, t.last) <= 0 {
		return fmt.Errorf("records: key %q after %q: a new store's tables are written in key order", key, t.last)
	}
	t.last = append(t.last[:0], key...)
	if err := t.w.Set(key, value); err != nil {
		return fmt.Errorf("records: %w", err)
	}
	return nil
}

// ingest closes a new store's sorted files and ingests them.
func (s *Store) ingest() error {
	var paths []string
	for _, t := range s.tables {
		if err := t.w.Close(); err != nil {
			return fmt.Errorf("records: %w", err)
		}
		paths = append(paths, t.path)
	}
	s.tables = nil
	if len(paths) == 0 {
		return nil
	}
	if err := s.db.Ingest(context.Background(), paths); err != nil {
		return fmt.Errorf("records: %s: %w", s.dir, err)
	}
	return nil
}

// Delete removes key; only a copy (Copy) deletes.
func (s *Store) Delete(key []byte) error {
	if s.tables != nil {
		return errors.New("records: a new store is written, not changed")
	}
	if s.batch == nil {
		s.batch = s.db.NewBatch()
	}
	if err := s.batch.Delete(key, nil); err != nil {
		return fmt.Errorf("records: %w", err)
	}
	return s.commitFull()
}

func (s *Store) commitFull() error {
	if s.batch.Len() < batchBytes {
		return nil
	}
	return s.commit()
}

func (s *Store) commit() error {
	if s.batch == nil {
		return nil
	}
	b := s.batch
	s.batch = nil
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("records: %s: %w", s.dir, err)
	}
	return b.Close()
}

// Close commits what is pending, writes it to disk (the store has no
// write-ahead log: a store is whole only once closed) and closes the store;
// a writable store then lists its files' checksums (SumsName) for Open.
func (s *Store) Close() error {
	if s.db == nil {
		return nil
	}
	var err error
	if s.tables != nil {
		err = s.ingest()
	}
	if !s.readOnly && err == nil {
		err = s.commit()
		if err == nil {
			if err = s.db.Flush(); err != nil {
				err = fmt.Errorf("records: %s: %w", s.dir, err)
			}
		}
	}
	if cerr := s.db.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("records: %s: %w", s.dir, cerr)
	}
	s.db = nil
	if !s.readOnly && err == nil {
		err = writeSums(s.dir, s.linked)
	}
	return err
}

// Abort closes the store without committing what is pending.
func (s *Store) Abort() {
	for _, t := range s.tables {
		t.w.Close()
		os.Remove(t.path)
	}
	s.tables = nil
	if s.batch != nil {
		s.batch.Close()
		s.batch = nil
	}
	if s.db != nil {
		s.db.Close()
		s.db = nil
	}
}
