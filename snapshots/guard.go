package snapshots

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/kv"
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
//   - A hard link made to a file or removed moves its change time too, and
//     builds share store tables, point index files and search segments so:
//     an incremental build links its base's (kv.NewLayer, Writer.StoreOn,
//     index.Update), and removing an old build unlinks what a later one
//     shares. A search segment is served from a private copy hashed as it
//     is made, so a change time that moved alone is taken as its new look.
//     For the others, whose bytes are checked by chunk, a
//     change time that moved alone (the same device, inode, size and
//     modification time) is taken as the file's new look, and every chunk
//     is checked again as it is next read: a write whose modification time
//     was set back is still refused, when its bytes are read.
//   - A failed check marks the snapshot damaged: every later read fails too,
//     with an error that wraps domain.ErrDamaged, until a good snapshot is
//     swapped in.

// sealed is one file of an open snapshot.
type sealed struct {
	rel  string // as the manifest lists it
	path string
	size int64
	at   atomic.Pointer[stamp] // the file as opened, or as looked at since (relooks)
	// hashes are its chunk hashes; nil when the file was hashed whole at
	// open (or is being, for the search index) and needs no chunk checks.
	hashes []byte
	// listed are its chunk hashes as the chunks file lists them, kept
	// also where hashes is nil (a search index file): what a build that
	// links the file repeats in its own manifest (Writer.SumStoreOn).
	listed []byte
	done   []atomic.Uint64 // a bit per chunk checked
	// relooks is set for a store table or point index file: a change of its change time alone
	// takes a new look and checks its chunks again (see above). gen counts
	// those; mu orders the marking of a chunk checked against the clearing.
	relooks bool
	gen     atomic.Uint64
	mu      sync.Mutex
}

// maxReadAgain bounds the reads again of one read: a file whose change
// time keeps moving is refused as changed.
const maxReadAgain = 3

func newSealed(dir string, f File, hashes []byte) (*sealed, error) {
	path := join(dir, f.Path)
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	// A search segment is read from a private copy, hashed as it is made,
	// so a change of the snapshot's file after that reaches no answer; the
	// other files builds share are checked by chunk again.
	chunked := hashes != nil && (strings.HasPrefix(f.Path, StoreDir+"/") || Shared(f.Path))
	s := &sealed{rel: f.Path, path: path, size: f.Size, hashes: hashes, relooks: chunked || searchSegment(f.Path)}
	at := stampOf(st)
	s.at.Store(&at)
	if hashes != nil {
		s.done = make([]atomic.Uint64, (chunkCount(f.Size)+63)/64)
	}
	return s, nil
}

// checked reports whether chunk i was checked already.
func (f *sealed) checked(i int64) bool { return f.done[i/64].Load()&(1<<(i%64)) != 0 }

// markChecked marks chunk i checked, unless the file's chunks were cleared
// for checks again since generation gen, whose bytes were checked.
func (f *sealed) markChecked(i int64, gen uint64) {
	if f.relooks {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.gen.Load() != gen {
			return
		}
	}
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
// and p is filled from them. gen is the generation of f.gen read before.
func (f *sealed) readAt(r io.ReaderAt, p []byte, off int64, gen uint64) (int, error) {
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
			f.markChecked(i, gen)
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
	if err := f.look(st, err, f.gen.Load()); err != errReadAgain {
		return err
	}
	return nil
}

// look is unchanged for a read begun at generation gen: errReadAgain when
// that read's bytes must be read again (see relooks).
func (f *sealed) look(st os.FileInfo, err error, gen uint64) error {
	if err != nil {
		return fmt.Errorf("%w: %s: %w", domain.ErrDamaged, f.rel, err)
	}
	now := stampOf(st)
	at := f.at.Load()
	switch {
	case now == *at && f.gen.Load() == gen:
		return nil
	case now == *at:
		return errReadAgain
	case !f.relooks || !at.sameBytes(now):
		return fmt.Errorf("%w: %s %s (%s)", domain.ErrDamaged, f.rel, errChanged, at.diff(now))
	}
	f.mu.Lock()
	if *f.at.Load() != now {
		for i := range f.done {
			f.done[i].Store(0)
		}
		f.at.Store(&now)
		f.gen.Add(1)
	}
	f.mu.Unlock()
	return errReadAgain
}

// guardedRead reads p at off from r, checking the chunks as readAt does,
// and then looks at the file (stat): a read from a file that changed is
// refused, and one whose change time alone moved is read again.
func (f *sealed) guardedRead(r io.ReaderAt, stat func() (os.FileInfo, error), p []byte, off int64) (int, error) {
	for try := 0; ; try++ {
		gen := f.gen.Load()
		n, err := f.readAt(r, p, off, gen)
		if err != nil && !errors.Is(err, io.EOF) {
			return n, err
		}
		st, serr := stat()
		switch cerr := f.look(st, serr, gen); {
		case cerr == errReadAgain && try < maxReadAgain:
			continue
		case cerr == errReadAgain:
			return 0, fmt.Errorf("%w: %s %s (its change time keeps moving)", domain.ErrDamaged, f.rel, errChanged)
		case cerr != nil:
			return 0, cerr
		}
		return n, err
	}
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
		f.markChecked(i, f.gen.Load())
	}
	return nil
}

// storeGuard is the kv.Guard of a snapshot's store.
type storeGuard struct{ s *Snapshot }

func (g storeGuard) ReadAt(name string, r io.ReaderAt, stat func() (os.FileInfo, error), p []byte, off int64) (int, error) {
	f := g.s.files[StoreDir+"/"+name]
	if f == nil {
		return 0, g.s.damage.mark(fmt.Errorf("%w: %s/%s is not listed in the manifest", domain.ErrDamaged, StoreDir, name))
	}
	n, err := f.guardedRead(r, stat, p, off)
	g.s.damage.mark(err)
	return n, err
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
	n, err := g.f.readAt(r, p, off, g.f.gen.Load())
	g.s.damage.mark(err)
	return n, err
}

// Unchanged answers kv.ErrReadAgain when the file's change time alone
// moved (a night linked it): its chunks are checked again as they are next
// read, and the probe is made again.
func (g pointsGuard) Unchanged(st os.FileInfo, err error) error {
	err = g.f.look(st, err, g.f.gen.Load())
	if err == errReadAgain {
		return kv.ErrReadAgain
	}
	return g.s.damage.mark(err)
}
