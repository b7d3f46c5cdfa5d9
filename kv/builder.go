package kv

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/productdata/pds/internal/pebbleutil"
)

// storeOptions are the options the store is built and opened with: 4 KiB data
// blocks and bloom filters, which favour point reads.
func storeOptions() *pebble.Options {
	o := &pebble.Options{Logger: pebbleutil.Logger{}}
	for i := range o.Levels {
		o.Levels[i].BlockSize = 4 << 10
		o.Levels[i].BlockRestartInterval = 4
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	o.EnsureDefaults()
	return o
}

// Builder writes a new store. Each table is written as one sorted SST; Finish
// ingests them all into a fresh Pebble DB at dir. Keys of one table must be
// added in increasing order.
type Builder struct {
	dir, sstDir string
	db          *pebble.DB
	wopts       sstable.WriterOptions
	tables      map[byte]*tableWriter
	done        []string // the files closed so far
	fileSize    uint64   // a table's file is closed and another begun past this size
	points      *pointsWriter
}

// tableFileSize is the size at which a table's file is closed and the table
// goes on in a new one. Pebble's writer keeps a file's index in memory until
// the file is closed: in one file per table, the evidence table's index held
// 72 MiB of live heap midway through the views of 1,000,000 products, and
// grew with the table, so the collector ran far more often as the heap neared
// its limit. The files of a table hold consecutive key ranges, so they are
// ingested side by side.
const tableFileSize = 256 << 20

type tableWriter struct {
	path    string
	files   int // files begun, this one included
	w       *sstable.Writer
	last    []byte
	entries int64
}

// NewBuilder creates an empty store at dir (which must not exist) and a
// working folder sstDir for the tables.
func NewBuilder(dir, sstDir string) (*Builder, error) {
	if err := os.MkdirAll(sstDir, 0o755); err != nil {
		return nil, fmt.Errorf("kv: %w", err)
	}
	opts := storeOptions()
	opts.ErrorIfExists = true
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("kv: create store: %w", err)
	}
	return &Builder{
		dir:      dir,
		sstDir:   sstDir,
		db:       db,
		wopts:    opts.MakeWriterOptions(6, db.TableFormat()),
		tables:   map[byte]*tableWriter{},
		fileSize: tableFileSize,
	}, nil
}

// singleLevelIndex are the tables written with a one-level index: those
// read by every product GET or resolve item (identities and aliases). With
// an index block as large as the data needs, a point read looks up one
// index block instead of a top-level one and then one of its partitions;
// the index is larger as a single block, which a served store keeps in its
// block cache.
var singleLevelIndex = [...]byte{TagIdentity, TagAlias}

// tableOptions are the writer options of table tag: opts, with no limit on
// the index block for the tables in singleLevelIndex (which makes Pebble
// write a one-level index however many data blocks there are). This is a
// writer option only; stores written either way open the same.
func tableOptions(opts sstable.WriterOptions, tag byte) sstable.WriterOptions {
	for _, t := range singleLevelIndex {
		if t == tag {
			opts.IndexBlockSize = math.MaxInt32
		}
	}
	return opts
}

// WritePoints makes the builder also write a point index of table PointsTag
// at path (which must not exist), finished by Finish. Call it before the
// first Set.
func (b *Builder) WritePoints(path string) error {
	if b.points != nil || len(b.tables) > 0 {
		return fmt.Errorf("kv: WritePoints after the first Set")
	}
	p, err := createPoints(path)
	if err != nil {
		return err
	}
	b.points = p
	return nil
}

// Set adds key (a full key from Key or AppendViewKey) with value to its table.
func (b *Builder) Set(key, value []byte) error {
	if len(key) < 2 {
		return fmt.Errorf("kv: key too short")
	}
	tag := key[0]
	t := b.tables[tag]
	if t == nil {
		t = &tableWriter{}
		b.tables[tag] = t
	}
	if t.last != nil && string(key) <= string(t.last) {
		return fmt.Errorf("kv: keys out of order in table %c: %q after %q", tag, key, t.last)
	}
	if t.w != nil && t.w.Raw().EstimatedSize() >= b.fileSize {
		if err := b.closeFile(tag, t); err != nil {
			return err
		}
	}
	if t.w == nil {
		t.files++
		t.path = filepath.Join(b.sstDir, fmt.Sprintf("table-%c-%04d.sst", tag, t.files))
		f, err := vfs.Default.Create(t.path, vfs.WriteCategoryUnspecified)
		if err != nil {
			return fmt.Errorf("kv: %w", err)
		}
		t.w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), tableOptions(b.wopts, tag))
	}
	t.last = append(t.last[:0], key...)
	t.entries++
	if err := t.w.Set(key, value); err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	if tag == PointsTag && b.points != nil {
		return b.points.add(key, value)
	}
	return nil
}

// Counts returns the number of entries written per table tag.
func (b *Builder) Counts() map[string]int64 {
	out := map[string]int64{}
	for tag, t := range b.tables {
		out[string(tag)] = t.entries
	}
	return out
}

// closeFile closes table tag's current file.
func (b *Builder) closeFile(tag byte, t *tableWriter) error {
	w := t.w
	t.w = nil
	if err := w.Close(); err != nil {
		return fmt.Errorf("kv: close table %c: %w", tag, err)
	}
	b.done = append(b.done, t.path)
	return nil
}

// Finish closes every table, ingests them and closes the store.
func (b *Builder) Finish() error {
	tags := make([]int, 0, len(b.tables))
	for tag := range b.tables {
		tags = append(tags, int(tag))
	}
	sort.Ints(tags)
	for _, tag := range tags {
		if t := b.tables[byte(tag)]; t.w != nil {
			if err := b.closeFile(byte(tag), t); err != nil {
				return err
			}
		}
	}
	b.tables = nil
	if b.points != nil {
		p := b.points
		b.points = nil
		if err := p.finish(); err != nil {
			return err
		}
	}
	if len(b.done) > 0 {
		if err := b.db.Ingest(context.Background(), b.done); err != nil {
			return fmt.Errorf("kv: ingest: %w", err)
		}
	}
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("kv: close store: %w", err)
	}
	b.db = nil
	return os.RemoveAll(b.sstDir)
}

// Abort discards the build.
func (b *Builder) Abort() {
	for _, t := range b.tables {
		if t.w != nil {
			_ = t.w.Close()
		}
	}
	if b.points != nil {
		b.points.abort()
	}
	if b.db != nil {
		_ = b.db.Close()
	}
	_ = os.RemoveAll(b.sstDir)
}
