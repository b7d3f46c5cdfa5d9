package snapshots

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/productdata/pds/domain"
)

// A served snapshot trusts no byte it has not checked, and no file that
// changed after it was opened (docs/snapshots.md, "What is checked when"):
//
//   - Open checks the manifest (and its signature), the listing and every
//     file's size and kind. A format 3 snapshot's bytes are then checked
//     chunk by chunk (chunks.go) as they are first read; the files of an
//     older format are hashed whole before Open returns.
//   - Every read from a file is followed by a look at the file (its device,
//     inode, size, modification and change times): a file replaced, cut or
//     written since Open fails the read. Nobody but root can write a file
//     without moving its change time.
//   - A failed check marks the snapshot damaged: every later read fails too,
//     with an error that wraps domain.ErrDamaged, until a good snapshot is
//     swapped in.

// errChanged is the cause of a read refused because its file changed.
var errChanged = errors.New("changed since it was opened")

// sealed is one file of an open snapshot.
type sealed struct {
	rel  string // as the manifest lists it
	path string
	size int64
	at   stamp // the file as opened
	// hashes are its chunk hashes; nil when the file was hashed whole at
	// open (or is being, for the search index) and needs no chunk checks.
	hashes []byte
	done   []atomic.Uint64 // a bit per chunk checked
}

func newSealed(dir string, f File, hashes []byte) (*sealed, error) {
	path := join(dir, f.Path)
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	s := &sealed{rel: f.Path, path: path, size: f.Size, at: stampOf(st), hashes: hashes}
	if hashes != nil {
		s.done = make([]atomic.Uint64, (chunkCount(f.Size)+63)/64)
	}
	return s, nil
}

// checked reports whether chunk i was checked already.
func (f *sealed) checked(i int64) bool { return f.done[i/64].Load()&(1<<(i%64)) != 0 }

func (f *sealed) markChecked(i int64) {
	w := &f.done[i/64]
	for {
		old := w.Load()
		if w.CompareAndSwap(old, old|1<<(i%64)) {
			return
		}
	}
}

// chunkBufs are ChunkSize buffers for chunk checks.
var chunkBufs = sync.Pool{New: func() any { b := make([]byte, ChunkSize); return &b }}

// readAt reads p at off from r, a reader of the file, checking the chunks
// the range covers that were not checked yet: those are read whole, hashed,
// and p is filled from them.
func (f *sealed) readAt(r io.ReaderAt, p []byte, off int64) (int, error) {
	if f.hashes == nil || off < 0 || off >= f.size {
		return r.ReadAt(p, off)
	}
	end := min(off+int64(len(p)), f.size)
	first, last := off/ChunkSize, (end-1)/ChunkSize
	all := true
	for i := first; i <= last && all; i++ {
		all = f.checked(i)
	}
	if all {
		return r.ReadAt(p, off)
	}
	bp := chunkBufs.Get().(*[]byte)
	defer chunkBufs.Put(bp)
	n := 0
	for i := first; i <= last; i++ {
		start := i * ChunkSize
		chunk := (*bp)[:min(ChunkSize, f.size-start)]
		if _, err := r.ReadAt(chunk, start); err != nil && !(errors.Is(err, io.EOF) && i == last) {
			return n, err
		}
		if !f.checked(i) {
			if !chunkMatches(f.hashes, i, chunk) {
				return n, fmt.Errorf("%w: %s: bytes %d to %d do not match their checksum", domain.ErrDamaged, f.rel, start, start+int64(len(chunk)))
			}
			f.markChecked(i)
		}
		from := max(off, start) - start
		n += copy(p[n:], chunk[from:min(int64(len(chunk)), end-start)])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// unchanged refuses a file whose stat no longer matches the one at open.
func (f *sealed) unchanged(st os.FileInfo, err error) error {
	if err != nil {
		return fmt.Errorf("%w: %s: %v", domain.ErrDamaged, f.rel, err)
	}
	if now := stampOf(st); now != f.at {
		return fmt.Errorf("%w: %s %s (%s)", domain.ErrDamaged, f.rel, errChanged, f.at.diff(now))
	}
	return nil
}

// check looks at the file by its path: the 1 s watch's check.
func (f *sealed) check() error { return f.unchanged(os.Lstat(f.path)) }

// damage records the first damage a snapshot met and returns err.
type damage struct {
	first atomic.Pointer[error]
}

func (d *damage) mark(err error) error {
	if err != nil && errors.Is(err, domain.ErrDamaged) {
		first := err // a copy: taking err's address would move every call's err to the heap
		d.first.CompareAndSwap(nil, &first)
	}
	return err
}

// get returns the first damage, or nil.
func (d *damage) get() error {
	if p := d.first.Load(); p != nil {
		return *p
	}
	return nil
}

// checkMapped checks the chunks of [off, off+n) of m, the file mapped,
// that were not checked yet.
func (f *sealed) checkMapped(m []byte, off, n int64) error {
	if f.hashes == nil || n <= 0 {
		return nil
	}
	end := min(off+n, f.size, int64(len(m)))
	for i := off / ChunkSize; i*ChunkSize < end; i++ {
		if f.checked(i) {
			continue
		}
		start := i * ChunkSize
		if !chunkMatches(f.hashes, i, m[start:min(start+ChunkSize, f.size)]) {
			return fmt.Errorf("%w: %s: bytes %d to %d do not match their checksum", domain.ErrDamaged, f.rel, start, min(start+ChunkSize, f.size))
		}
		f.markChecked(i)
	}
	return nil
}

// storeGuard is the kv.Guard of a snapshot's store.
type storeGuard struct{ s *Snapshot }

func (g storeGuard) ReadAt(name string, r io.ReaderAt, p []byte, off int64) (int, error) {
	f := g.s.files[StoreDir+"/"+name]
	if f == nil {
		return 0, fmt.Errorf("%w: %s/%s is not listed in the manifest", domain.ErrDamaged, StoreDir, name)
	}
	n, err := f.readAt(r, p, off)
	g.s.damage.mark(err)
	return n, err
}

func (g storeGuard) Unchanged(name string, st os.FileInfo, err error) error {
	f := g.s.files[StoreDir+"/"+name]
	if f == nil {
		return fmt.Errorf("%w: %s/%s is not listed in the manifest", domain.ErrDamaged, StoreDir, name)
	}
	return g.s.damage.mark(f.unchanged(st, err))
}

// pointsGuard is the kv.PointsGuard of a snapshot's point index.
type pointsGuard struct {
	s *Snapshot
	f *sealed
}

func (g pointsGuard) Check(m []byte, off, n int64) error {
	return g.s.damage.mark(g.f.checkMapped(m, off, n))
}

func (g pointsGuard) ReadAt(r io.ReaderAt, p []byte, off int64) (int, error) {
	n, err := g.f.readAt(r, p, off)
	g.s.damage.mark(err)
	return n, err
}

func (g pointsGuard) Unchanged(st os.FileInfo, err error) error {
	return g.s.damage.mark(g.f.unchanged(st, err))
}
