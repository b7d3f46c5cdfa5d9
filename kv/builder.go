package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/klauspost/compress/s2"
	"github.com/productdata/pds/internal/pebbleutil"
	"github.com/productdata/pds/kv/jsonshape"
)

// storeOptions are the options the store is built and opened with: 4 KiB data
// blocks and bloom filters, which favour point reads, and Snappy (Pebble's
// default) for the tables that are not compressed already (tableOptions).
func storeOptions() *pebble.Options {
	o := &pebble.Options{Logger: pebbleutil.Logger{}, EventListener: pebbleutil.Listener()}
	for i := range o.Levels {
		o.Levels[i].BlockSize = 4 << 10
		o.Levels[i].BlockRestartInterval = 4
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	o.EnsureDefaults()
	return o
}

// builderFileCacheShards is the file cache's shard count a store is built
// with. Pebble's default is GOMAXPROCS, and the store's OPTIONS file records
// it: with the default, the same input built on machines of different core
// counts gave different files. A served store opens with its own options.
const builderFileCacheShards = 8

// Builder writes a new store. Each table is written as one sorted SST; Finish
// ingests them all into a fresh Pebble DB at dir. Keys of one table must be
// added in increasing order.
//
// A store is written in layout 3: after WritePoints and Train, identity
// views go to the point index alone and each subject's passport and
// evidence views to one value of TagViews, both as the Encoder makes them.
type Builder struct {
	dir, sstDir string
	db          *pebble.DB
	wopts       sstable.WriterOptions
	tables      map[byte]*tableWriter
	done        []string // the files closed so far
	fileSize    uint64   // a table's file is closed and another begun past this size
	points      *pointsWriter
	enc         *Encoder
	viewsDict   []byte // written to TagDict by Finish
	maxFrame    uint64 // the largest TagViews frame, decoded
	// layer is set by NewLayer: the store is a base's with the tables
	// written here ingested on top, and baseDict is the base's TagDict value.
	layer    bool
	baseDict []byte
	layers   int // the base's layers
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
	opts.Experimental.FileCacheShards = builderFileCacheShards
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
// read by every product GET or resolve item (identities, in the layout
// before the point index held them alone, and aliases). With an index block
// as large as the data needs, a point read looks up one index block instead
// of a top-level one and then one of its partitions; the index is larger as
// a single block, which a served store keeps in its block cache.
var singleLevelIndex = [...]byte{TagIdentity, TagAlias}

// tableOptions are the writer options of table tag: opts, with no limit on
// the index block for the tables in singleLevelIndex (which makes Pebble
// write a one-level index however many data blocks there are), and no block
// compression for TagViews, whose values are zstd frames already. These are
// writer options only; stores written either way open the same.
func tableOptions(opts sstable.WriterOptions, tag byte) sstable.WriterOptions {
	for _, t := range singleLevelIndex {
		if t == tag {
			opts.IndexBlockSize = math.MaxInt32
		}
	}
	if tag == TagViews {
		opts.Compression = sstable.NoCompression
	}
	return opts
}

// WritePoints makes the builder also write a point index of table PointsTag
// at path (which must not exist), finished by Finish. Call it before Train
// and the first Set.
func (b *Builder) WritePoints(path string) error {
	if b.points != nil || b.enc != nil || len(b.tables) > 0 {
		return fmt.Errorf("kv: WritePoints after Train or the first Set")
	}
	p, err := createPoints(path)
	if err != nil {
		return err
	}
	b.points = p
	return nil
}

// WritePointsLayer is WritePoints for a store built on a base (NewLayer)
// whose point index is of version 3: the file at path is a layer on the
// base's index (pointStack), holding only what WriteNightViews gives it of
// the night. Train it with the base's dictionaries (TrainWith).
func (b *Builder) WritePointsLayer(path string) error {
	if !b.layer {
		return fmt.Errorf("kv: WritePointsLayer builds on a base (NewLayer) only")
	}
	if err := b.WritePoints(path); err != nil {
		return err
	}
	b.points.layer = true
	return nil
}

// Train makes the builder's dictionaries from views of a spread of
// products (samples may be empty: no dictionary) and its Encoder. Call it
// (or TrainWith) after WritePoints, before the first view is Set.
func (b *Builder) Train(s Samples) error {
	pe := make([][]byte, len(s.Passport))
	for i := range pe {
		pe[i] = append(append([]byte(nil), s.Passport[i]...), s.Evidence[i]...)
	}
	var d Dictionaries
	if d.Views = coverDict(pe, viewsDictSize, viewsDictSegment); len(d.Views) < minDictSize {
		d.Views = nil
	}
	bodies := make([][]byte, 0, len(s.Identity))
	for _, v := range s.Identity {
		view, err := DecodeView(v)
		if err != nil {
			return fmt.Errorf("kv: a sampled identity view: %w", err)
		}
		bodies = append(bodies, view.Body)
	}
	d.IdentityShapes = jsonshape.Train(bodies).Bytes()
	return b.TrainWith(d)
}

// Dictionaries are a store's compression dictionaries: of its TagViews
// frames (a zstd raw dictionary, or none) and of its identity views: the
// table of their shapes (jsonshape.Table.Bytes), or, in a store whose point
// index is of version 2, an s2 dictionary (s2.Dict.Bytes, or none) in
// Identity and IdentityShapes nil.
type Dictionaries struct {
	Views, Identity []byte
	IdentityShapes  []byte
}

// TrainWith is Train with dictionaries made already, such as an earlier
// store's (ReadDictionaries): every view that did not change since is then
// stored as the same bytes.
func (b *Builder) TrainWith(d Dictionaries) error {
	if b.points == nil || b.enc != nil {
		return errors.New("kv: Train comes once, after WritePoints")
	}
	enc, err := newEncoder(d)
	if err != nil {
		return err
	}
	dict, version := d.Identity, 2
	if d.IdentityShapes != nil {
		dict, version = d.IdentityShapes, 3
	}
	if err := b.points.setDict(dict, version); err != nil {
		return err
	}
	b.enc, b.viewsDict = enc, d.Views
	return nil
}

// Dictionaries returns the store's compression dictionaries: those of a
// store of layout 3, whose point index is open (UsePoints or ReadPoints),
// read through the store's and the index's guards.
func (s *Store) Dictionaries() (Dictionaries, error) {
	if s.views == nil || s.points == nil || s.points.base().version < 2 {
		return Dictionaries{}, errors.New("kv: the store has no compression dictionaries (a store of layout 3, with its point index open, has them)")
	}
	v, ok, err := s.get(Key(TagDict, dictViews), nil)
	if err != nil {
		return Dictionaries{}, fmt.Errorf("kv: the store's views dictionary: %w", err)
	}
	if !ok {
		return Dictionaries{}, errors.New("kv: the store has no views dictionary")
	}
	_, n := binary.Uvarint(v)
	if n <= 0 {
		return Dictionaries{}, fmt.Errorf("kv: the store's views dictionary: %w", errViewsCorrupt)
	}
	base := s.points.base()
	identity, err := base.read(pointsHeaderSize, base.dictLen, new([]byte))
	if err == nil {
		err = base.unchanged()
	}
	if err != nil {
		return Dictionaries{}, s.noteDamage(err)
	}
	if base.version == 3 {
		return Dictionaries{Views: v[n:], IdentityShapes: bytes.Clone(identity)}, nil
	}
	return Dictionaries{Views: v[n:], Identity: bytes.Clone(identity)}, nil
}

// Encoder is the encoder of the values of TagViews and PointsTag (nil before
// Train). It is safe for concurrent use.
func (b *Builder) Encoder() *Encoder { return b.enc }

// Set adds key (a full key from Key or AppendViewKey) with value to its table.
// A value of TagViews or PointsTag is an Encoder's; TagPassport and
// TagEvidence take no values of their own in layout 3.
func (b *Builder) Set(key, value []byte) error {
	if len(key) < 2 {
		return fmt.Errorf("kv: key too short")
	}
	tag := key[0]
	switch tag {
	case TagPassport, TagEvidence:
		return fmt.Errorf("kv: table %c: passport and evidence views go to table %c together (Encoder.Views)", tag, TagViews)
	case TagDict:
		return fmt.Errorf("kv: table %c is the builder's own", tag)
	case PointsTag, TagViews:
		if b.enc == nil {
			return fmt.Errorf("kv: table %c: Train first", tag)
		}
	}
	t, err := b.next(tag, key)
	if err != nil {
		return err
	}
	t.entries++
	switch tag {
	case PointsTag:
		n, err := b.identityLen(value)
		if err != nil {
			return fmt.Errorf("kv: identity value of %q: %w", key, err)
		}
		return b.points.add(key, value, n)
	case TagViews:
		n, _, _, err := viewsHeader(value)
		if err != nil {
			return fmt.Errorf("kv: views value of %q: %w", key, err)
		}
		b.maxFrame = max(b.maxFrame, n)
	}
	return b.setTable(tag, t, key, value)
}

// identityLen is the decoded length of an identity value of the builder's
// Encoder.
func (b *Builder) identityLen(value []byte) (int, error) {
	if b.points.version == 3 {
		_, _, _, _, n, err := shapedParts(value)
		return int(n), err
	}
	return s2.DecodedLen(value)
}

// next is table tag's writer, once key is found to come after the table's
// last key.
func (b *Builder) next(tag byte, key []byte) (*tableWriter, error) {
	t := b.tables[tag]
	if t == nil {
		t = &tableWriter{}
		b.tables[tag] = t
	}
	if t.last != nil && string(key) <= string(t.last) {
		return nil, fmt.Errorf("kv: keys out of order in table %c: %q after %q", tag, key, t.last)
	}
	t.last = append(t.last[:0], key...)
	return t, nil
}

// setTable writes key and value to table tag's current file, beginning one
// when there is none.
func (b *Builder) setTable(tag byte, t *tableWriter, key, value []byte) error {
	w, err := b.file(tag, t)
	if err != nil {
		return err
	}
	if err := w.Set(key, value); err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	return nil
}

// deleteTable writes a deletion of key to table tag's current file.
func (b *Builder) deleteTable(tag byte, t *tableWriter, key []byte) error {
	w, err := b.file(tag, t)
	if err != nil {
		return err
	}
	if err := w.Delete(key); err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	return nil
}

// file is table tag's current file: a new one when there is none or the
// current one is full.
func (b *Builder) file(tag byte, t *tableWriter) (*sstable.Writer, error) {
	if t.w != nil && t.w.Raw().EstimatedSize() >= b.fileSize {
		if err := b.closeFile(tag, t); err != nil {
			return nil, err
		}
	}
	if t.w == nil {
		t.files++
		t.path = filepath.Join(b.sstDir, fmt.Sprintf("table-%c-%04d.sst", tag, t.files))
		f, err := vfs.Default.Create(t.path, vfs.WriteCategoryUnspecified)
		if err != nil {
			return nil, fmt.Errorf("kv: %w", err)
		}
		t.w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), tableOptions(b.wopts, tag))
	}
	return t.w, nil
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

// Finish writes the views' dictionary (a layer: its count of layers, and
// the dictionary if it changed), closes every table, ingests them and
// closes the store.
func (b *Builder) Finish() error {
	t := &tableWriter{}
	if b.layer {
		b.tables[TagDict] = t
		if err := b.setTable(TagDict, t, Key(TagDict, dictLayers), binary.AppendUvarint(nil, uint64(b.layers+1))); err != nil {
			return err
		}
	}
	if v := binary.AppendUvarint(nil, max(b.maxFrame, 1)); b.enc != nil && !(b.layer && bytes.Equal(append(v, b.viewsDict...), b.baseDict)) {
		b.tables[TagDict] = t
		if err := b.setTable(TagDict, t, Key(TagDict, dictViews), append(v, b.viewsDict...)); err != nil {
			return err
		}
	}
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
	from := time.Now().Unix()
	if err := b.ingest(); err != nil {
		return err
	}
	to := time.Now().Unix()
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("kv: close store: %w", err)
	}
	b.db = nil
	if b.layer {
		if err := removeOldManifests(b.dir); err != nil {
			return err
		}
	}
	if err := fixCreationTimes(b.dir, len(b.done), from, to); err != nil {
		return err
	}
	return os.RemoveAll(b.sstDir)
}

// ingest ingests the closed files into the store, where they land in the
// bottom level (L6) as they are: their key ranges overlap nothing.
func (b *Builder) ingest() error {
	if len(b.done) == 0 {
		return nil
	}
	if err := b.db.Ingest(context.Background(), b.done); err != nil {
		return fmt.Errorf("kv: ingest: %w", err)
	}
	return nil
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
