package service

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/manifest"
)

// Snapshot is one opened, verified snapshot.
type Snapshot struct {
	Dir       string
	Manifest  manifest.Manifest
	store     *kv.Store
	sources   []*domain.Source // sorted by id
	prefixLen int              // the longest gtin prefix any source lists
	byID      map[string]*domain.SourceDescriptor
	cursorKey []byte
	searcher  Searcher
	refs      atomic.Int64
	stamp     *Stamp
	// CacheBytes is the size of the store's block cache.
	CacheBytes int64
	// Points is whether the store answers identity views from the
	// snapshot's point index (see kv.PointsTag).
	Points bool
	// Verified is how long checking the signature and every file's checksum
	// took, Opened how long opening the store, the sources and the index
	// took after that: together, what a start or a swap waits for.
	Verified, Opened time.Duration
}

// Stamp names the snapshot that made an answer: its manifest's build id and
// creation time, which every answer read from a snapshot carries in
// meta.snapshot (and REST in response headers).
type Stamp struct {
	BuildID   string
	CreatedAt string
	meta      []byte // ,"snapshot":{...} ready for the envelope's meta
}

func newStamp(m manifest.Manifest) *Stamp {
	b, _ := json.Marshal(struct {
		BuildID   string `json:"build_id"`
		CreatedAt string `json:"created_at"`
	}{m.BuildID, m.CreatedAt})
	return &Stamp{BuildID: m.BuildID, CreatedAt: m.CreatedAt, meta: append([]byte(`,"snapshot":`), b...)}
}

// stamped marks res as answered from s.
func (s *Snapshot) stamped(res *Result, err error) (*Result, error) {
	if res != nil {
		res.Snapshot = s.stamp
	}
	return res, err
}

// OpenOptions configure OpenSnapshot.
type OpenOptions struct {
	// CacheBytes is the store's block cache; zero or less sizes it from
	// the snapshot (see AutoCacheBytes).
	CacheBytes int64
	// PublicKey, when set, is the key the manifest must be signed with: an
	// unsigned or otherwise signed snapshot is refused (at start and at every
	// swap, which both open through here).
	PublicKey *manifest.PublicKey
	// NoPoints leaves the snapshot's point index unused: every read is
	// Pebble's (slower, without the index's mapped memory).
	NoPoints bool
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
// a catalogue, which the GET benchmarks' 20,000 of 200,000 products fit in.
// Memory is taken only as blocks are read, so a small snapshot never uses
// the whole of it.
func AutoCacheBytes(m manifest.Manifest) int64 {
	var size int64
	for _, f := range m.Files {
		if path.Dir(f.Path) == "store" {
			size += f.Size
		}
	}
	return min(max(size, MinAutoCache), MaxAutoCache)
}

// OpenSnapshot verifies the snapshot at dir against its manifest (and the
// manifest's signature, when o names a public key) and opens it read-only. dir may be a symbolic link (such as a "current" pointer); the
// target is opened.
func OpenSnapshot(dir string, o OpenOptions) (*Snapshot, error) {
	start := time.Now()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", manifest.ErrInvalid, dir, err)
	}
	if o.PublicKey != nil {
		if err := o.PublicKey.VerifySignature(real); err != nil {
			return nil, err
		}
	}
	m, err := manifest.Verify(real)
	if err != nil {
		return nil, err
	}
	verified := time.Since(start)
	if o.CacheBytes <= 0 {
		o.CacheBytes = AutoCacheBytes(m)
	}
	st, err := kv.Open(filepath.Join(real, "store"), o.CacheBytes, m.FilesIn("store"))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", manifest.ErrInvalid, dir, err)
	}
	// A snapshot built before the point index has none; its store answers
	// the same, from Pebble.
	usePoints := !o.NoPoints && slices.ContainsFunc(m.Files, func(f manifest.File) bool { return f.Path == kv.PointsPath })
	if usePoints {
		if err := st.UsePoints(filepath.Join(real, filepath.FromSlash(kv.PointsPath))); err != nil {
			st.Close()
			return nil, fmt.Errorf("%w: %s: %v", manifest.ErrInvalid, dir, err)
		}
	}
	s := &Snapshot{Dir: real, Manifest: m, store: st, byID: map[string]*domain.SourceDescriptor{}, stamp: newStamp(m), Verified: verified,
		CacheBytes: o.CacheBytes, Points: usePoints}
	s.refs.Store(1)
	err = st.Scan(kv.TagSource, func(_, v []byte) error {
		d := &domain.SourceDescriptor{}
		if err := json.Unmarshal(v, d); err != nil {
			return err
		}
		s.byID[d.ID] = d
		s.sources = append(s.sources, &d.Source)
		return nil
	})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("%w: %s: sources: %v", manifest.ErrInvalid, dir, err)
	}
	sort.Slice(s.sources, func(i, j int) bool { return s.sources[i].ID < s.sources[j].ID })
	for _, src := range s.sources {
		if src.Covers != nil {
			for _, p := range src.Covers.GTINPrefixes {
				s.prefixLen = max(s.prefixLen, len(p))
			}
		}
	}
	key, ok, err := st.Meta("cursor_key")
	if err != nil || !ok {
		st.Close()
		return nil, fmt.Errorf("%w: %s: no cursor key", manifest.ErrInvalid, dir)
	}
	s.cursorKey = key
	ix, err := index.Open(filepath.Join(real, "index"))
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("%w: %s: search index: %v", manifest.ErrInvalid, dir, err)
	}
	s.searcher = ix
	s.Opened = time.Since(start) - verified
	return s, nil
}

// acquire takes a reference; false when the snapshot is already retired.
func (s *Snapshot) acquire() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference and closes the snapshot after the last one.
func (s *Snapshot) release() {
	if s.refs.Add(-1) == 0 {
		s.close()
	}
}

func (s *Snapshot) close() {
	if s.searcher != nil {
		s.searcher.Close()
	}
	s.store.Close()
}

// Searcher is what search needs of the manufacturer index.
type Searcher interface {
	Search(ctx context.Context, q index.Query) (index.Page, error)
	Close() error
}

// Close drops the opener's reference; use it only for a snapshot that was
// never handed to a Service.
func (s *Snapshot) Close() { s.release() }
