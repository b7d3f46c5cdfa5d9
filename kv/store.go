package kv

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/internal/pebbleutil"
)

// Store is a snapshot's store opened read-only. It is safe for concurrent use.
type Store struct {
	db     *pebble.DB
	cache  interface{ Unref() }
	iters  iterPool
	points *pointStack // nil: every read is Pebble's
	// views decodes table TagViews: set for a store of layout 3, whose
	// identity views are in its point index alone.
	views *viewsDecoder
	// OnDamage, when set before the store is shared, is told of every
	// read that found the store's bytes damaged (see storeError).
	OnDamage func(error)
}

// noteDamage tells OnDamage of err when it wraps domain.ErrDamaged, and
// returns it.
func (s *Store) noteDamage(err error) error {
	if err != nil && s.OnDamage != nil && errors.Is(err, domain.ErrDamaged) {
		s.OnDamage(err)
	}
	return err
}

// storeError is a failed read in domain terms: a Pebble corruption (a
// block whose checksum does not match) or a refusal of the store's Guard
// wraps domain.ErrDamaged, and onDamage hears of it; anything else is
// internal. The cause is kept for the log.
func storeError(onDamage func(error), op string, err error) error {
	if pebble.IsCorruptionError(err) && !errors.Is(err, domain.ErrDamaged) {
		err = fmt.Errorf("%w: %w", domain.ErrDamaged, pebbleutil.Corruption(err))
	}
	err = fmt.Errorf("kv: %s: %w", op, err)
	if onDamage != nil && errors.Is(err, domain.ErrDamaged) {
		onDamage(err)
	}
	return domain.Internal(err)
}

// iterPool keeps the Readers of finished reads for the next ones. A
// pebble.DB.Get builds and tears down an iterator stack (a table iterator,
// its index and filter state) on every call, which costs as much as the seek
// itself when the blocks are cached; a served store never changes, so one
// iterator can serve any number of reads, one at a time. Close closes the
// idle ones (Pebble refuses to close a DB with iterators open).
type iterPool struct {
	mu     sync.Mutex
	idle   []*Reader
	closed bool
}

// maxIdleReaders bounds the idle Readers kept; more concurrent reads than
// that build and close their own.
const maxIdleReaders = 64

func (p *iterPool) take(db *pebble.DB, onDamage func(error)) (*Reader, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		r := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return r, nil
	}
	p.mu.Unlock()
	it, err := db.NewIter(nil)
	if err != nil {
		return nil, storeError(onDamage, "iterator", err)
	}
	return &Reader{it: it, pool: p, onDamage: onDamage}, nil
}

func (p *iterPool) give(r *Reader) error {
	p.mu.Lock()
	if p.closed || r.err || len(p.idle) == maxIdleReaders {
		p.mu.Unlock()
		return r.it.Close()
	}
	p.idle = append(p.idle, r)
	p.mu.Unlock()
	return nil
}

func (p *iterPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, r := range p.idle {
		r.it.Close()
	}
	p.idle = nil
}

// Open opens the store at dir read-only with a block cache of cacheBytes.
// files names the files in dir that may be read (those the snapshot's
// manifest lists); nil allows every file. Every read of those files goes
// through guard, when it is not nil. It takes no lock: any number of
// processes may serve one snapshot at once (see servedFS).
func Open(dir string, cacheBytes int64, files []string, guard Guard) (*Store, error) {
	opts := storeOptions()
	opts.ReadOnly = true
	opts.ErrorIfNotExists = true
	opts.FS = newServedFS(dir, files, guard)
	c := pebble.NewCache(cacheBytes)
	opts.Cache = c
	db, err := pebble.Open(dir, opts)
	if err != nil {
		c.Unref()
		return nil, openError(dir, err)
	}
	s := &Store{db: db, cache: c}
	v, ok, err := s.get(Key(TagDict, dictViews), nil)
	if err == nil && ok {
		s.views, err = newViewsDecoder(v)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("kv: cannot open the store %s: %w", dir, err)
	}
	return s, nil
}

// PointsOnly reports whether the store keeps its identity views in its
// point index alone (layout 3): it answers them only once UsePoints or
// ReadPoints has opened the index.
func (s *Store) PointsOnly() bool { return s.views != nil }

// openError says why a store could not be opened in words an operator can
// act on; the cause stays wrapped, so that a caller can tell a fault of
// this host (too many open files, no memory) from one of the store.
func openError(dir string, err error) error {
	var why string
	_, serr := os.Stat(dir)
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		why = "there is no such folder"
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK):
		why = "it is locked by another process that opened it for writing (an older pds, or a program other than pds serve)"
	case errors.Is(err, errReadOnly):
		why = "opening it would need a write, and a served store is read-only (is it a store built by this version's pds ingest?)"
	case errors.Is(err, fs.ErrPermission):
		why = "this process may not read it (permission denied)"
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, pebble.ErrDBDoesNotExist):
		why = "it is missing or incomplete"
	default:
		return fmt.Errorf("kv: cannot open the store %s: %w", dir, err)
	}
	return fmt.Errorf("kv: cannot open the store %s: %s: %w", dir, why, err)
}

// UsePoints maps the point index at path (written by Builder.WritePoints
// into the same snapshot): from then on, reads of table PointsTag are
// answered from it. Call it before the store is shared.
//
// guard, when not nil, checks every range a read takes from the file and
// the file after each read (see PointsGuard).
func (s *Store) UsePoints(path string, guard PointsGuard) error {
	return s.setPoints(openPoints(path, guard))
}

// AdvisePointsRandom tells the kernel that the mapped point index
// (UsePoints) is read at random, so that a page fault reads that page
// alone and not the disk's read-ahead window around it: for a server whose
// memory cannot hold the index. It reports whether there was a mapping to
// advise: none without a point index, or where the index is read into
// memory instead of mapped (Windows).
func (s *Store) AdvisePointsRandom() bool {
	return s.points != nil && s.points.adviseRandom()
}

// ReadPoints is UsePoints without a mapping: each probe reads the file
// with pread (three reads of a few bytes), and only the index's radix, 4
// bytes a bucket, is held in memory.
func (s *Store) ReadPoints(path string, guard PointsGuard) error {
	return s.setPoints(readPointsFile(path, guard))
}

// AddPointsLayer opens a layer a night wrote on the point index (see
// pointStack), read as the index is (mapped, or with pread): call it for
// each layer, oldest first, after UsePoints or ReadPoints and before the
// store is shared.
func (s *Store) AddPointsLayer(path string, guard PointsGuard) error {
	if s.points == nil {
		return fmt.Errorf("kv: point index layer %s: the index below it is not open", path)
	}
	base := s.points.base()
	var p *points
	var err error
	if base.mapped != nil {
		p, err = openPoints(path, guard)
	} else {
		p, err = readPointsFile(path, guard)
	}
	if err != nil {
		return err
	}
	if !p.layer || p.version != base.version || !bytes.Equal(p.dictRaw, base.dictRaw) {
		p.close()
		return fmt.Errorf("%w: %s: not a layer of the point index below it (a night's layer has the index's version and dictionary)", errPointsCorrupt, path)
	}
	s.points.files = append(s.points.files, p)
	return nil
}

// PointsVersion is the version of the open point index (0: none); a night
// writes layers on an index of version 3 only.
func (s *Store) PointsVersion() int {
	if s.points == nil {
		return 0
	}
	return s.points.base().version
}

func (s *Store) setPoints(p *points, err error) error {
	if err != nil {
		return err
	}
	if s.points != nil {
		p.close()
		return fmt.Errorf("kv: the store has a point index already")
	}
	if p.layer {
		p.close()
		return fmt.Errorf("%w: a night's layer, opened as the point index itself", errPointsCorrupt)
	}
	if s.views != nil && p.version < 2 {
		p.close()
		return fmt.Errorf("kv: the store's identity views are compressed and its point index is of version %d, which does not hold them so", p.version)
	}
	s.points = &pointStack{files: []*points{p}}
	return nil
}

// maxReadAgain bounds the reads again of one read (ErrReadAgain): a file
// whose change time keeps moving fails it.
const maxReadAgain = 3

// Close closes the store.
func (s *Store) Close() error {
	s.iters.close()
	err := s.db.Close()
	s.cache.Unref()
	if s.views != nil {
		s.views.close()
	}
	if s.points != nil {
		if perr := s.points.close(); err == nil {
			err = perr
		}
		s.points = nil
	}
	return err
}

// get copies the value of key into dst[:0]; ok is false when key is absent.
// It seeks a pooled Reader (see iterPool) rather than calling
// pebble.DB.Get.
func (s *Store) get(key, dst []byte) ([]byte, bool, error) {
	r, err := s.iters.take(s.db, s.OnDamage)
	if err != nil {
		return dst[:0], false, err
	}
	dst, ok, err := r.Get(key, dst[:0])
	r.Close()
	return dst, ok, err
}

// Alias looks up which product identifier names. Its key and value are read
// into the pooled Reader's buffers (DecodeAlias copies what it keeps).
func (s *Store) Alias(identifier string) (Alias, bool, error) {
	r, err := s.iters.take(s.db, s.OnDamage)
	if err != nil {
		return Alias{}, false, err
	}
	defer r.Close()
	r.key = AppendKey(r.key[:0], TagAlias, identifier)
	v, ok, err := r.Get(r.key, r.val[:0])
	r.val = v
	if !ok || err != nil {
		return Alias{}, false, err
	}
	a, err := DecodeAlias(v)
	if err != nil {
		return Alias{}, false, domain.Internal(err)
	}
	return a, true, nil
}

// View appends a precomputed view to buf (a caller may keep bytes of its
// own before it, or pass buf[:0]); ok is false when there is none, and buf
// is then returned as it was. A view of table PointsTag, with a point index,
// is a probe whose key is built on the stack; any other is a Pebble seek whose
// key is built in the pooled Reader's buffer (one on the stack would escape
// to the heap through the iterator).
//
// In a store of layout 3 a passport or evidence view is decoded from its
// subject's TagViews value, read into the Reader's buffer.
func (s *Store) View(tag byte, subject, tenant string, buf []byte) ([]byte, bool, error) {
	if tag == PointsTag && s.points != nil {
		var k [256]byte // past that, AppendViewKey moves it to the heap
		key := AppendViewKey(k[:0], tag, subject, tenant)
		for try := 0; ; try++ {
			out, ok, err := s.points.get(key, buf)
			if err == nil {
				err = s.points.unchanged()
			}
			if errors.Is(err, ErrReadAgain) && try < maxReadAgain {
				continue
			}
			return out, ok, s.noteDamage(err)
		}
	}
	if tag == PointsTag && s.views != nil {
		return buf, false, errNoPoints
	}
	r, err := s.iters.take(s.db, s.OnDamage)
	if err != nil {
		return buf, false, err
	}
	defer r.Close()
	if s.views != nil && (tag == TagPassport || tag == TagEvidence) {
		r.key = AppendViewKey(r.key[:0], TagViews, subject, tenant)
		return r.part(s.views, tag, buf)
	}
	r.key = AppendViewKey(r.key[:0], tag, subject, tenant)
	return r.seek(r.key, buf)
}

// Meta reads a metadata value.
func (s *Store) Meta(name string) ([]byte, bool, error) {
	return s.get(Key(TagMeta, name), nil)
}

// Scan calls fn for every key and value of table tag, in key order; key has
// its table prefix removed. The slices are valid only during the call.
//
// Table PointsTag is read from the point index when one is open (it must be,
// in a store of layout 3), and in layout 3 the passport and evidence views
// are decoded from table TagViews.
func (s *Store) Scan(tag byte, fn func(key, value []byte) error) error {
	switch {
	case tag == PointsTag && s.points != nil:
		return s.scanPoints(func() error {
			return s.points.scan(func(k, v []byte) error { return fn(k[2:], v) })
		})
	case tag == PointsTag && s.views != nil:
		return errNoPoints
	case s.views != nil && (tag == TagPassport || tag == TagEvidence):
		var buf []byte
		return s.scan(TagViews, func(k, v []byte) error {
			var err error
			if buf, err = s.views.part(buf[:0], v, tag); err != nil {
				return storeError(s.OnDamage, "scan", fmt.Errorf("%w: %w", domain.ErrDamaged, err))
			}
			return fn(k, buf)
		})
	}
	return s.scan(tag, fn)
}

// ScanRaw is Scan with the values as the store holds them, not decoded: an
// identity value of the point index as an Encoder made it, a TagViews value
// as one frame. A Builder with the same dictionaries takes them back with
// Set, which is how an incremental build keeps the views of the products it
// does not compute again. key has its table prefix removed.
func (s *Store) ScanRaw(tag byte, fn func(key, value []byte) error) error {
	if tag == PointsTag && s.points != nil {
		return s.scanPoints(func() error {
			return s.points.scanRaw(func(_ *points, k, v []byte) error { return fn(k[2:], v) })
		})
	}
	if tag == PointsTag && s.views != nil {
		return errNoPoints
	}
	return s.scan(tag, fn)
}

// scanPoints runs walk, a scan of the point index, between a look at its
// files before (a link made since the last read is no change) and after.
func (s *Store) scanPoints(walk func() error) error {
	err := s.points.lookBefore()
	if err == nil {
		err = walk()
	}
	if err == nil {
		err = s.points.unchanged()
	}
	return s.noteDamage(err)
}

// scan is Scan of Pebble's table tag.
func (s *Store) scan(tag byte, fn func(key, value []byte) error) error {
	prefix := []byte{tag, 0}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: pebbleutil.PrefixEnd(prefix)})
	if err != nil {
		return storeError(s.OnDamage, "scan", err)
	}
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key()[2:], it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return storeError(s.OnDamage, "scan", err)
	}
	return nil
}

// Reader reads many keys with one iterator; read them in increasing key
// order for speed. Not safe for concurrent use; Close it when done.
type Reader struct {
	it    *pebble.Iterator
	pool  *iterPool // where Close returns it
	err   bool      // a read failed: the iterator is not used again
	limit []byte    // the seek limit of Get
	key   []byte    // the key of the Store's point reads
	val   []byte    // the value of an alias read, decoded before Close
	frame []byte    // a TagViews value, decoded by part
	// points answers the reads of table PointsTag when the store has a
	// point index, and views decodes the passport and evidence views of a
	// store of layout 3; set by NewReader only (the Store's own reads use
	// them directly).
	points *pointStack
	views  *viewsDecoder
	// onDamage is the store's OnDamage.
	onDamage func(error)
	// pointsRead is whether Get read the point index since Check.
	pointsRead bool
	// touched is what Prefetch read, kept so that its loads are not
	// optimised away.
	touched uint64
}

// Prefetch says that the next Gets will read keys (at most prefetchWindow
// are looked at). With a mapped point index, the memory the probes of those
// of table PointsTag read first is loaded for all of them at once, so that
// their cache misses overlap: in a batch of random identifiers that halves
// the time of a Get. It changes no answer; other keys are ignored.
func (r *Reader) Prefetch(keys [][]byte) {
	if r.points != nil {
		r.touched += r.points.touch(keys)
	}
}

// Check refuses the reads since the last Check when a file they read from
// was written or replaced meanwhile (see PointsGuard): call it after a
// batch of Gets, before their values are used. ErrReadAgain asks for the
// batch's reads to be made again.
func (r *Reader) Check() error {
	if !r.pointsRead || r.points == nil {
		return nil
	}
	r.pointsRead = false
	err := r.points.unchanged()
	if err != nil && r.onDamage != nil {
		r.onDamage(err)
	}
	return err
}

// NewReader returns a Reader over the whole store, from the store's pool.
func (s *Store) NewReader() (*Reader, error) {
	r, err := s.iters.take(s.db, s.OnDamage)
	if err == nil {
		r.points, r.views = s.points, s.views
	}
	return r, err
}

// Get appends the value of key to dst; ok is false when key is absent.
//
// It seeks with a limit just above key. Without one, a seek to a key after
// the previous one makes Pebble step forward a few entries before it seeks
// (its TrySeekUsingNext), which only pays when the keys are close together;
// the keys of a lookup batch are spread over the whole table, and those
// steps cost about a third of each seek. The limit also stops the seek at
// the first entry past key instead of looking further.
//
// Keys of table PointsTag are probes of the point index when the store has
// one; in a store of layout 3, keys of TagPassport and TagEvidence read
// their subject's TagViews value.
func (r *Reader) Get(key, dst []byte) ([]byte, bool, error) {
	if len(key) > 0 {
		switch tag := key[0]; {
		case tag == PointsTag && r.points != nil:
			r.pointsRead = true
			dst, ok, err := r.points.get(key, dst)
			if err != nil && r.onDamage != nil && errors.Is(err, domain.ErrDamaged) {
				r.onDamage(err)
			}
			return dst, ok, err
		case tag == PointsTag && r.views != nil:
			return dst, false, errNoPoints
		case r.views != nil && (tag == TagPassport || tag == TagEvidence):
			r.key = append(append(r.key[:0], TagViews), key[1:]...)
			return r.part(r.views, tag, dst)
		}
	}
	return r.seek(key, dst)
}

// View reads one view of subject for one visibility (tenant "" is public),
// as Get reads its key: tag is TagIdentity, TagPassport or TagEvidence.
func (r *Reader) View(tag byte, subject, tenant string, dst []byte) ([]byte, bool, error) {
	return r.Get(AppendViewKey(nil, tag, subject, tenant), dst)
}

// part appends to dst the view tag of the TagViews value under r.key.
func (r *Reader) part(views *viewsDecoder, tag byte, dst []byte) ([]byte, bool, error) {
	frame, ok, err := r.seek(r.key, r.frame[:0])
	r.frame = frame
	if err != nil || !ok {
		return dst, ok, err
	}
	if dst, err = views.part(dst, frame, tag); err != nil {
		return dst, false, storeError(r.onDamage, "view", fmt.Errorf("%w: %w", domain.ErrDamaged, err))
	}
	return dst, true, nil
}

// seek appends the value Pebble holds under key to dst.
func (r *Reader) seek(key, dst []byte) ([]byte, bool, error) {
	r.limit = append(append(r.limit[:0], key...), 0)
	if r.it.SeekGEWithLimit(key, r.limit) != pebble.IterValid || string(r.it.Key()) != string(key) {
		if err := r.it.Error(); err != nil {
			r.err = true
			return dst, false, storeError(r.onDamage, "seek", err)
		}
		return dst, false, nil
	}
	v, err := r.it.ValueAndErr()
	if err != nil {
		r.err = true
		return dst, false, storeError(r.onDamage, "value", err)
	}
	return append(dst, v...), true, nil
}

// Close gives the reader back to its store.
func (r *Reader) Close() error {
	r.points, r.views, r.pointsRead = nil, nil, false
	return r.pool.give(r)
}

// Keyed reports whether reads of table tag are hash probes of a point
// index, for which the order of the keys makes no difference.
func (r *Reader) Keyed(tag byte) bool { return r.points != nil && tag == PointsTag }
