package snapshots

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/kv"
)

// OpenOptions configure Open.
type OpenOptions struct {
	// CacheBytes is the store's block cache; zero or less sizes it from
	// the snapshot (see AutoCacheBytes), at most MaxAutoCacheBytes when
	// that is set.
	CacheBytes int64
	// MaxAutoCacheBytes, when positive, caps the cache sized from the
	// snapshot (a server in a memory cgroup takes a share of its limit).
	MaxAutoCacheBytes int64
	// Verifier, when set, must vouch for the manifest (a minisign key, or
	// a trust root): an unsigned or otherwise signed snapshot is refused.
	Verifier Verifier
	// NoPoints leaves the snapshot's point index unused: every read is
	// Pebble's (slower, without the index's mapped memory).
	NoPoints bool
	// HashAll hashes every file whole before Open returns, as for formats
	// before 3, instead of checking each chunk as it is first read.
	HashAll bool
	// SearchCopyDir, when set, is a folder on disk for the private copies
	// of the search index's segments (index.OpenOptions.CopyDir) instead
	// of memory.
	SearchCopyDir string
	// MemoryLimit, when positive, is the memory the serving process may
	// use, page cache included (its cgroup's limit). A mapped point index
	// larger than half of it is read a page at a time
	// (kv.Store.AdvisePointsRandom): it cannot stay in memory, and the
	// disk's read-ahead would evict what lookups need.
	MemoryLimit int64
}

// Snapshot is an opened, verified snapshot. Serving reads it through Alias
// and View (one key), NewReader (many keys) and Search; tools read whole
// tables through Scan and ScanRaw, and an incremental build takes its
// Dictionaries and Layers.
type Snapshot struct {
	Dir      string // the folder opened, symbolic links resolved
	Manifest Manifest
	// Sources are the snapshot's sources, sorted by id.
	Sources []*domain.SourceDescriptor
	// CursorKey is the build's secret for sealing search cursors.
	CursorKey []byte
	// CacheBytes is the size of the store's block cache.
	CacheBytes int64
	// Points is whether identity views are read from the point index;
	// PointsRandom whether its pages are read one at a time
	// (OpenOptions.MemoryLimit).
	Points, PointsRandom bool
	// PointLayers is how many layers nights wrote on the point index
	// (format 7), each probed before the one below.
	PointLayers int
	// Verified is how long checking the signature and the files took,
	// Opened how long opening the store, the sources and the index took
	// after that.
	Verified, Opened time.Duration

	store *kv.Store
	index *index.Index
	// files are the snapshot's files by manifest path, as opened.
	files      map[string]*sealed
	indexFiles []*sealed // the search index's, among files
	damage     damage
	// indexChecked is closed when the search index's files are hashed and
	// the index opened (at once for a snapshot hashed whole), with
	// indexErr set on failure; index is set only then.
	indexChecked chan struct{}
	indexErr     error
	// indexStart starts the hashing of pendingIndex once (CheckInBackground);
	// Close stops it with stopIndex.
	indexStart   sync.Once
	pendingIndex []File
	stopIndex    context.CancelFunc
	indexCtx     context.Context
	copyDir      string // OpenOptions.SearchCopyDir
}

// The bounds of AutoCacheBytes.
const (
	MinAutoCache = 256 << 20
	MaxAutoCache = 1 << 30
)

// AutoCacheBytes is the block cache a snapshot gets when none is asked for:
// the size of its store on disk, at least MinAutoCache and at most
// MaxAutoCache. The cache holds blocks decompressed (about 3.5 times their
// size on disk for the views of pds gen's data), so a cache of the store's
// size holds the views of roughly a third of the products: the hot part of
// a catalogue. Memory is taken only as blocks are read, so a small snapshot
// never uses the whole of it.
func AutoCacheBytes(m Manifest) int64 {
	var size int64
	for _, f := range m.Files {
		if inStore(f.Path) {
			size += f.Size
		}
	}
	return min(max(size, MinAutoCache), MaxAutoCache)
}

// Open verifies the snapshot at dir against its manifest (and the
// manifest's signature, when o names a public key) and opens it read-only.
// dir may be a symbolic link (such as a "current" pointer); the target is
// opened. Every failure wraps ErrInvalid.
func Open(dir string, o OpenOptions) (*Snapshot, error) {
	start := time.Now()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, dir, err)
	}
	if o.Verifier != nil {
		if err := VerifyStatement(real, o.Verifier); err != nil {
			return nil, err
		}
	}
	m, root, err := checkListing(real)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	s := &Snapshot{Dir: real, Manifest: m, CacheBytes: o.CacheBytes, files: map[string]*sealed{}, indexChecked: make(chan struct{}),
		copyDir: o.SearchCopyDir}
	s.indexCtx, s.stopIndex = context.WithCancel(context.Background())
	lazy := chunked(m.FormatVersion) && !o.HashAll
	var hashes map[string][]byte
	if lazy {
		hashes, err = readChunks(real, root, m)
	} else {
		// The search index's segments and doc store entries are hashed as
		// they are copied, when the index is opened (openIndex).
		err = hashAll(context.Background(), real, root, withoutCopied(m.Files))
		close(s.indexChecked)
		s.indexStart.Do(func() {})
	}
	if err != nil {
		return nil, err
	}
	var indexFiles []File
	for _, f := range m.Files {
		h := hashes[f.Path]
		inIndex := strings.HasPrefix(f.Path, IndexDir+"/")
		if inIndex {
			indexFiles, h = append(indexFiles, f), nil // hashed whole before the first search
		}
		sf, err := newSealed(real, f, h)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, dir, err)
		}
		sf.listed = hashes[f.Path]
		s.files[f.Path] = sf
		if inIndex {
			s.indexFiles = append(s.indexFiles, sf)
		}
	}
	s.Verified = time.Since(start)
	if s.CacheBytes <= 0 {
		s.CacheBytes = AutoCacheBytes(m)
		if o.MaxAutoCacheBytes > 0 {
			s.CacheBytes = min(s.CacheBytes, o.MaxAutoCacheBytes)
		}
	}
	if err := s.open(o, !lazy); err != nil {
		s.Close()
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, dir, err)
	}
	if lazy {
		s.pendingIndex = indexFiles
	}
	s.Opened = time.Since(start) - s.Verified
	return s, nil
}

// CheckInBackground starts hashing the search index's files whole and then
// opening the index in the background, when a lazy open left them unhashed
// (at most once). A server calls it once it answers, so that its start reads
// only what answers need; the first search starts it otherwise, and waits
// for it.
func (s *Snapshot) CheckInBackground() {
	s.indexStart.Do(func() { go s.checkIndex(s.pendingIndex) })
}

// checkIndex hashes the search index's files whole and opens the index, in
// the background: Bleve maps its segments, so they cannot be checked chunk
// by chunk as they are read, and opening reads them (a search waits for
// this, Search). Nothing of the index is opened before its bytes are
// known to be the snapshot's.
func (s *Snapshot) checkIndex(files []File) {
	defer close(s.indexChecked)
	root, err := os.OpenRoot(s.Dir)
	if err == nil {
		err = hashAll(s.indexCtx, s.Dir, root, withoutCopied(files))
		root.Close()
	}
	if err == nil {
		s.index, err = s.openIndex(s.indexCtx)
	}
	if s.indexCtx.Err() != nil {
		if s.index != nil {
			s.index.Close()
			s.index = nil
		}
		s.indexErr = ErrClosed
		return
	}
	if err != nil {
		s.indexErr = s.damage.mark(fmt.Errorf("%w: search index: %w", domain.ErrDamaged, err))
	}
}

// copiedByIndex says whether the listed path is one of the search index's
// files that it reads from a private copy (its Bleve segments, its doc
// store's entries), which are hashed as they are copied.
func copiedByIndex(path string) bool {
	rel, ok := strings.CutPrefix(path, IndexDir+"/")
	return ok && index.Copied(rel)
}

// withoutCopied is files less those the search index reads from private
// copies.
func withoutCopied(files []File) []File {
	var out []File
	for _, f := range files {
		if !copiedByIndex(f.Path) {
			out = append(out, f)
		}
	}
	return out
}

// openIndex opens the search index, whose other files were hashed. Bleve
// reads each segment, and the index its doc store's entries, from a private
// copy (index.OpenWith) that nothing can change under the server; each copy
// is hashed before it is read, so the bytes searched are the bytes checked.
// A listed segment that Bleve did not open is hashed from its file.
func (s *Snapshot) openIndex(ctx context.Context) (*index.Index, error) {
	listed := map[string]File{}
	for _, f := range s.Manifest.Files {
		if copiedByIndex(f.Path) {
			listed[f.Path] = f
		}
	}
	var mu sync.Mutex
	checked := map[string]bool{}
	check := func(path string, copy io.Reader) error {
		rel, err := filepath.Rel(s.Dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		lf, ok := listed[rel]
		if !ok {
			return fmt.Errorf("file %s is not listed in the manifest", rel)
		}
		switch ok, err := checksumOf(ctx, copy, lf); {
		case err != nil:
			return fmt.Errorf("file %s: %w", rel, err)
		case !ok:
			return fmt.Errorf("file %s does not match its checksum (changed or damaged)", rel)
		}
		mu.Lock()
		checked[rel] = true
		mu.Unlock()
		return nil
	}
	ix, err := index.OpenWith(join(s.Dir, IndexDir), index.OpenOptions{CheckCopy: check, CopyDir: s.copyDir})
	if err != nil {
		return nil, err
	}
	var rest []File
	for p, f := range listed {
		if !checked[p] {
			rest = append(rest, f)
		}
	}
	if len(rest) > 0 {
		root, err := os.OpenRoot(s.Dir)
		if err == nil {
			err = hashAll(ctx, s.Dir, root, rest)
			root.Close()
		}
		if err != nil {
			ix.Close()
			return nil, err
		}
	}
	return ix, nil
}

// pointLayers lists the layers of the point index the manifest lists
// (pointLayerPath), oldest first: numbered from 1 without a gap, and no
// other file beside the index.
func (s *Snapshot) pointLayers() ([]string, error) {
	var layers []string
	for s.files[pointLayerPath(len(layers)+1)] != nil {
		layers = append(layers, pointLayerPath(len(layers)+1))
	}
	dir := path.Dir(PointsPath)
	for _, f := range s.Manifest.Files {
		if path.Dir(f.Path) == dir && f.Path != PointsPath && !slices.Contains(layers, f.Path) {
			return nil, fmt.Errorf("%w: %s: %s lists %s, which is neither the point index nor one of its layers (%s.1 and on, without a gap)", ErrInvalid, s.Dir, ManifestName, f.Path, PointsPath)
		}
	}
	return layers, nil
}

// open opens the store, its point index (when listed and wanted), the
// sources, the cursor key and, when withIndex (its files were hashed), the
// search index of a verified snapshot.
func (s *Snapshot) open(o OpenOptions, withIndex bool) error {
	st, err := kv.Open(join(s.Dir, StoreDir), s.CacheBytes, s.Manifest.FilesIn(StoreDir), storeGuard{s})
	if err != nil {
		return err
	}
	st.OnDamage = func(err error) { s.damage.mark(err) }
	s.store = st
	// A snapshot built before the point index has none; its store answers
	// the same, from Pebble. A store of format 4 keeps its identity views
	// in the index alone: without the mapping (NoPoints) it is read with
	// pread.
	listed := s.files[PointsPath]
	s.Points = !o.NoPoints && listed != nil
	switch {
	case s.Points:
		err = st.UsePoints(join(s.Dir, PointsPath), pointsGuard{s, listed})
		if err == nil && o.MemoryLimit > 0 && listed.size > o.MemoryLimit/2 {
			s.PointsRandom = st.AdvisePointsRandom()
		}
	case st.PointsOnly() && listed != nil:
		err = st.ReadPoints(join(s.Dir, PointsPath), pointsGuard{s, listed})
	case st.PointsOnly():
		err = fmt.Errorf("its store keeps the identity views in %s, which the manifest does not list", PointsPath)
	}
	if err == nil && (s.Points || st.PointsOnly()) && listed != nil {
		var layers []string
		if layers, err = s.pointLayers(); err == nil {
			for _, p := range layers {
				if err = st.AddPointsLayer(join(s.Dir, p), pointsGuard{s, s.files[p]}); err != nil {
					break
				}
				s.PointLayers++
			}
		}
	}
	if err != nil {
		return err
	}
	err = st.Scan(kv.TagSource, func(_, v []byte) error {
		d := &domain.SourceDescriptor{}
		if err := json.Unmarshal(v, d); err != nil {
			return err
		}
		s.Sources = append(s.Sources, d)
		return nil
	})
	if err != nil {
		return fmt.Errorf("sources: %w", err)
	}
	sort.Slice(s.Sources, func(i, j int) bool { return s.Sources[i].ID < s.Sources[j].ID })
	key, ok, err := st.Meta(kv.MetaCursorKey)
	if err != nil {
		return fmt.Errorf("reading the cursor key: %w", err)
	}
	if !ok {
		return fmt.Errorf("no cursor key")
	}
	s.CursorKey = key
	if !withIndex {
		return nil
	}
	if s.index, err = s.openIndex(context.Background()); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	return nil
}

// Damaged returns why the snapshot may no longer be served, or nil: the
// first read or look that found one of its files changed or damaged.
func (s *Snapshot) Damaged() error { return s.damage.get() }

// Check looks at every file of the snapshot (a stat each, no reading) and
// marks the snapshot damaged when one was replaced, cut, written or
// removed since Open. It returns Damaged.
func (s *Snapshot) Check() error {
	for _, f := range s.files {
		if err := s.damage.mark(f.check()); err != nil {
			break
		}
	}
	return s.Damaged()
}

// Alias reads the alias of an identifier: the canonical subject it names
// and who owns it.
func (s *Snapshot) Alias(identifier string) (kv.Alias, bool, error) {
	return s.store.Alias(identifier)
}

// View reads one precomputed view (table tag) of subject for tenant ("" for
// the public one), appended to buf.
func (s *Snapshot) View(tag byte, subject, tenant string, buf []byte) ([]byte, bool, error) {
	return s.store.View(tag, subject, tenant, buf)
}

// NewReader returns a reader for many keys; Close gives it back.
func (s *Snapshot) NewReader() (*kv.Reader, error) { return s.store.NewReader() }

// Dictionaries returns the compression dictionaries of a format 4
// snapshot's store, for a build that reuses them (ingest's
// DictionariesFrom).
func (s *Snapshot) Dictionaries() (kv.Dictionaries, error) {
	if s.Manifest.FormatVersion < 4 {
		return kv.Dictionaries{}, fmt.Errorf("%s: a snapshot of format %d has no compression dictionaries (format 4 and later have them)", s.Dir, s.Manifest.FormatVersion)
	}
	d, err := s.store.Dictionaries()
	if err != nil {
		return d, fmt.Errorf("%s: %w", s.Dir, err)
	}
	return d, nil
}

// Scan calls fn with every key and value of table tag, in key order: for
// tools that export a whole table.
func (s *Snapshot) Scan(tag byte, fn func(key, value []byte) error) error {
	return s.store.Scan(tag, fn)
}

// ScanRaw is Scan with the values as the store holds them (kv.Store.ScanRaw):
// for an incremental build, which keeps the views it does not compute again.
func (s *Snapshot) ScanRaw(tag byte, fn func(key, value []byte) error) error {
	return s.store.ScanRaw(tag, fn)
}

// Layers is how many layers the snapshot's store holds on top of the
// tables a whole build wrote (kv.Store.Layers).
func (s *Snapshot) Layers() (int, error) { return s.store.Layers() }

// Search runs a manufacturer search. The first waits until the index's
// files are hashed; every search is followed by a look at those files, so
// that one written, cut or replaced meanwhile fails it. Bleve searches
// private copies of the index's segments (openIndex), which no change to
// the files reaches; the doc store beside them is read with pread. A panic
// of the search is an error that marks the snapshot damaged.
func (s *Snapshot) Search(ctx context.Context, q index.Query) (page index.Page, err error) {
	if err := s.WaitIndex(ctx); err != nil {
		return page, err
	}
	defer func() {
		if r := recover(); r != nil {
			page, err = index.Page{}, s.damage.mark(fmt.Errorf("%w: search index: %v", domain.ErrDamaged, r))
		}
	}()
	page, err = s.index.Search(ctx, q)
	for _, f := range s.indexFiles {
		if cerr := s.damage.mark(f.check()); cerr != nil {
			return index.Page{}, cerr
		}
	}
	return page, err
}

// WaitIndex starts the search index's check (CheckInBackground) and waits
// until its files are hashed and it is open, or ctx ends. It returns nil
// when the index is ready to search, its error otherwise (ErrClosed once
// the snapshot was closed first).
func (s *Snapshot) WaitIndex(ctx context.Context) error {
	s.CheckInBackground()
	select {
	case <-s.indexChecked:
		return s.indexErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes the store and the search index; a check of the index still
// running in the background is stopped and waited for.
func (s *Snapshot) Close() error {
	s.stopIndex()
	s.indexStart.Do(func() { // never started: it will not be
		s.indexErr = ErrClosed
		close(s.indexChecked)
	})
	<-s.indexChecked
	var err error
	if s.index != nil {
		err = s.index.Close()
	}
	if s.store != nil {
		if cerr := s.store.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// SelfTest reads the opened snapshot as serving does: an alias and an
// identity view (through the point index when it is used), a batch through
// a reader, and a search. Absence is a fine answer; an error is not.
func (s *Snapshot) SelfTest(ctx context.Context) error {
	const probe = "gtin:09520123456788"
	if _, _, err := s.store.Alias(probe); err != nil {
		return fmt.Errorf("self-test alias read on %s: %w", s.Dir, err)
	}
	if _, _, err := s.store.View(kv.TagIdentity, probe, "", nil); err != nil {
		return fmt.Errorf("self-test identity read on %s: %w", s.Dir, err)
	}
	r, err := s.store.NewReader()
	if err != nil {
		return fmt.Errorf("self-test reader on %s: %w", s.Dir, err)
	}
	for _, tag := range []byte{kv.TagIdentity, kv.TagPassport, kv.TagEvidence} {
		if _, _, err := r.View(tag, probe, "", nil); err != nil {
			r.Close()
			return fmt.Errorf("self-test view read on %s: %w", s.Dir, err)
		}
	}
	if err := r.Close(); err != nil {
		return fmt.Errorf("self-test reader on %s: %w", s.Dir, err)
	}
	if _, err := s.Search(ctx, index.Query{Manufacturer: "self test", TrustLevelMin: -1, Limit: 1}); err != nil {
		return fmt.Errorf("self-test search on %s: %w", s.Dir, err)
	}
	return nil
}
