package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/productdata/pds/internal/osfile"
	"github.com/productdata/pds/internal/pebbleutil"
)

// NewLayer starts a store at dir (which must not exist) that holds the
// finished store base as it is, plus one layer of the entries given to the
// Builder: base's tables are hard-linked, not copied, and Finish ingests the
// layer's tables on top of them, where Pebble reads them before base's. A key
// the layer sets replaces base's; a key it deletes (Delete) is gone. Nothing
// is compacted, so base's tables stay the files they were and a night's
// build writes only what changed.
//
// base must be a store of layout 3 (it has a views dictionary), written by
// NewBuilder or NewLayer. Call WritePoints and TrainWith, with base's
// dictionaries, as for a new store: the point index is written whole
// (WritePoints), or as a layer on the base's (WritePointsLayer).
//
// The layer's table TagDict is written only if its value changed.
func NewLayer(dir, sstDir, base string) (*Builder, error) {
	if err := linkStore(base, dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := os.MkdirAll(sstDir, 0o755); err != nil {
		return nil, fmt.Errorf("kv: %w", err)
	}
	opts := storeOptions()
	opts.ErrorIfNotExists = true
	opts.DisableAutomaticCompactions = true
	opts.Experimental.FileCacheShards = builderFileCacheShards
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("kv: open the copy of the store %s: %w", base, err)
	}
	dict, closer, err := db.Get(Key(TagDict, dictViews))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("kv: the store %s has no views dictionary (is it of layout 3?): %w", base, err)
	}
	baseDict := bytes.Clone(dict)
	closer.Close()
	maxFrame, n := binary.Uvarint(baseDict)
	if n <= 0 {
		db.Close()
		return nil, fmt.Errorf("kv: the views dictionary of %s: %w", base, errViewsCorrupt)
	}
	// Only an absent count is "no layers": a count that cannot be read
	// fails the build.
	layers := 0
	v, closer, err := db.Get(Key(TagDict, dictLayers))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		db.Close()
		return nil, fmt.Errorf("kv: the store %s: read its count of layers (key %q): %w", base, Key(TagDict, dictLayers), pebbleutil.Corruption(err))
	default:
		layers, err = decodeLayers(v)
		closer.Close()
		if err != nil {
			db.Close()
			return nil, err
		}
	}
	return &Builder{
		dir:      dir,
		sstDir:   sstDir,
		db:       db,
		wopts:    opts.MakeWriterOptions(6, db.TableFormat()),
		tables:   map[byte]*tableWriter{},
		fileSize: tableFileSize,
		layer:    true,
		baseDict: baseDict,
		maxFrame: maxFrame,
		layers:   layers,
	}, nil
}

// linkStore makes dir a copy of the closed store base: its tables
// hard-linked where they can be (Pebble never writes a table it has finished, and a layer's
// build compacts nothing, so neither store can change the other's), its
// MANIFEST, OPTIONS and marker files copied. The write-ahead log is not
// copied: a finished store's is empty, and Pebble starts one of its own.
func linkStore(base, dir string) error {
	entries, err := os.ReadDir(base)
	if err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		from, to := filepath.Join(base, name), filepath.Join(dir, name)
		switch {
		case !e.Type().IsRegular():
			return fmt.Errorf("kv: the store %s holds %s, which is not a file", base, name)
		case name == "LOCK" || strings.HasSuffix(name, ".log"):
		case pebbleutil.LinkTable(from, to):
		default: // and a table that cannot be linked (base on another file system): slower, and the same store
			if err := osfile.Copy(from, to); err != nil {
				return fmt.Errorf("kv: copy %s: %w", from, err)
			}
		}
	}
	return nil
}

// Delete removes key (a full key, as Set takes) from the store's base: a
// Builder of NewLayer only, in key order with the table's Sets.
func (b *Builder) Delete(key []byte) error {
	if !b.layer {
		return fmt.Errorf("kv: Delete builds a layer (NewLayer) only")
	}
	if len(key) < 2 {
		return fmt.Errorf("kv: key too short")
	}
	tag := key[0]
	layerPoints := tag == PointsTag && b.points != nil && b.points.layer
	if tag == PointsTag && b.points != nil && !layerPoints || tag == TagDict {
		return fmt.Errorf("kv: table %c is written whole", tag)
	}
	t, err := b.next(tag, key)
	if err != nil {
		return err
	}
	if layerPoints {
		return b.points.add(key, nil, 0)
	}
	return b.deleteTable(tag, t, key)
}

// Layers is how many layers the store holds on top of the tables of the
// build that wrote it whole: 0 for a store from NewBuilder, one more for
// each NewLayer it went through.
func (s *Store) Layers() (int, error) {
	v, ok, err := s.get(Key(TagDict, dictLayers), nil)
	if err != nil || !ok {
		return 0, err
	}
	return decodeLayers(v)
}

func decodeLayers(v []byte) (int, error) {
	n, k := binary.Uvarint(v)
	if k != len(v) || n > 1<<20 {
		return 0, fmt.Errorf("kv: the store's count of layers: %w", errViewsCorrupt)
	}
	return int(n), nil
}

// RawScanner reads the entries of one table under one prefix after
// another, in increasing order, with one iterator: a scan of many small
// prefixes (a night's products) costs a seek each, not an iterator each.
type RawScanner struct {
	it       *pebble.Iterator
	tag      byte
	key      []byte
	onDamage func(error)
}

// BaseScanner returns a RawScanner of table tag of the base of a layer
// (NewLayer), before Finish: it reads the base's tables as the layer's
// copy links them, with Pebble's block checksums and no Guard, which is
// cheaper than reading the base snapshot itself (whose Guard hashes every
// chunk it first reads) for a build that reads its own host's base.
func (b *Builder) BaseScanner(tag byte) (*RawScanner, error) {
	if !b.layer || b.db == nil {
		return nil, fmt.Errorf("kv: BaseScanner reads the base of a layer before Finish")
	}
	return newRawScanner(b.db, tag, nil)
}

func newRawScanner(db *pebble.DB, tag byte, onDamage func(error)) (*RawScanner, error) {
	if tag == PointsTag {
		return nil, fmt.Errorf("kv: a RawScanner of table %c", tag)
	}
	lower := []byte{tag, 0}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: pebbleutil.PrefixEnd(lower)})
	if err != nil {
		return nil, storeError(onDamage, "scan", err)
	}
	return &RawScanner{it: it, tag: tag, onDamage: onDamage}, nil
}

// Scan calls fn with each key of the table that begins with prefix (without
// the table's prefix) and its value as the store holds it, in key order;
// key has the table's prefix removed. The slices are valid only during the
// call.
func (r *RawScanner) Scan(prefix []byte, fn func(key, value []byte) error) error {
	r.key = append(append(r.key[:0], r.tag, 0), prefix...)
	for ok := r.it.SeekGE(r.key); ok && bytes.HasPrefix(r.it.Key(), r.key); ok = r.it.Next() {
		if err := fn(r.it.Key()[2:], r.it.Value()); err != nil {
			return err
		}
	}
	if err := r.it.Error(); err != nil {
		return storeError(r.onDamage, "scan", err)
	}
	return nil
}

// Close closes the scanner.
func (r *RawScanner) Close() error {
	if err := r.it.Close(); err != nil {
		return storeError(r.onDamage, "scan", err)
	}
	return nil
}

// removeOldManifests removes from the closed store at dir the MANIFEST
// files but the current one, which its marker names: Pebble keeps the one
// before (the base's, copied) however it is told.
func removeOldManifests(dir string) error {
	marks, err := filepath.Glob(filepath.Join(dir, "marker.manifest.*"))
	if err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	if len(marks) != 1 {
		return fmt.Errorf("kv: %s holds %d manifest markers, want 1", dir, len(marks))
	}
	_, current, ok := strings.Cut(strings.TrimPrefix(filepath.Base(marks[0]), "marker.manifest."), ".")
	if !ok || !strings.HasPrefix(current, "MANIFEST-") {
		return fmt.Errorf("kv: %s: a manifest marker names no MANIFEST", marks[0])
	}
	all, err := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
	if err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	for _, p := range all {
		if filepath.Base(p) != current {
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("kv: %w", err)
			}
		}
	}
	return nil
}
