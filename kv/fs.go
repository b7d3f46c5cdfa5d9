package kv

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// servedFS is the file system a served store is opened through. It differs
// from the operating system's in three ways:
//
//   - Lock takes no lock. Pebble locks a store's directory (fcntl on LOCK)
//     even when it opens it read-only, so a second process serving the same
//     snapshot, as a blue/green restart on one host does, failed with
//     "resource temporarily unavailable". A snapshot is immutable and is
//     opened read-only, in which mode Pebble writes nothing (no WAL, no
//     flush, no compaction, no deletion of obsolete files), so readers need
//     no exclusion from one another; nothing writes a published snapshot.
//   - Every write (create, rename, remove, link...) fails.
//   - In the store's own directory it lists and opens only the files named
//     in allowed (the snapshot's manifest), so a file added after the build,
//     such as a stray WAL or table, is never read.
type servedFS struct {
	vfs.FS
	dir     string
	allowed map[string]bool // base names in dir; nil allows every name
	guard   Guard           // nil: reads are not checked
}

// A Guard vouches for what a served store reads from its files.
type Guard interface {
	// ReadAt reads len(p) bytes at off of the store's file name (a base
	// name) from r, refusing bytes that are not the snapshot's with an
	// error that wraps domain.ErrDamaged; then it looks at the file (stat)
	// and refuses the same way a read from a file whose look is not the
	// one it had when the store was opened: the read may have returned
	// bytes written after the snapshot was checked.
	ReadAt(name string, r io.ReaderAt, stat func() (os.FileInfo, error), p []byte, off int64) (int, error)
}

// guardedFile is a store file read through a Guard: every read goes
// through Guard.ReadAt and is followed by a look at the file.
type guardedFile struct {
	vfs.File
	name  string
	guard Guard
	pos   int64 // for Read
}

func (f *guardedFile) ReadAt(p []byte, off int64) (int, error) {
	return f.guard.ReadAt(f.name, f.File, f.stat, p, off)
}

func (f *guardedFile) stat() (os.FileInfo, error) { return f.File.Stat() }

// Read reads on from where the last Read ended, through ReadAt.
func (f *guardedFile) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.pos)
	f.pos += int64(n)
	if n > 0 && errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

func newServedFS(dir string, allowed []string, guard Guard) servedFS {
	f := servedFS{FS: vfs.Default, dir: filepath.Clean(dir), guard: guard}
	if allowed != nil {
		f.allowed = make(map[string]bool, len(allowed))
		for _, n := range allowed {
			f.allowed[n] = true
		}
	}
	return f
}

// permits reports whether name may be opened: anything outside the store's
// directory (Pebble opens none), and in it only allowed names.
func (f servedFS) permits(name string) bool {
	if f.allowed == nil || filepath.Dir(filepath.Clean(name)) != f.dir {
		return true
	}
	return f.allowed[filepath.Base(name)]
}

type noLock struct{}

func (noLock) Close() error { return nil }

// Lock takes no lock; see servedFS.
func (f servedFS) Lock(string) (io.Closer, error) { return noLock{}, nil }

// List lists dir, leaving out what may not be opened.
func (f servedFS) List(dir string) ([]string, error) {
	names, err := f.FS.List(dir)
	if err != nil || f.allowed == nil || filepath.Clean(dir) != f.dir {
		return names, err
	}
	kept := names[:0]
	for _, n := range names {
		if f.allowed[n] {
			kept = append(kept, n)
		}
	}
	return kept, nil
}

// Open opens name for reading when it may be opened.
func (f servedFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	if !f.permits(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("not listed in the snapshot's manifest: %w", fs.ErrNotExist)}
	}
	file, err := f.FS.Open(name, opts...)
	if err != nil || f.guard == nil || filepath.Dir(filepath.Clean(name)) != f.dir {
		return file, err
	}
	return &guardedFile{File: file, name: filepath.Base(name), guard: f.guard}, nil
}

// Stat answers only for names that may be opened.
func (f servedFS) Stat(name string) (vfs.FileInfo, error) {
	if !f.permits(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return f.FS.Stat(name)
}

func (servedFS) Create(string, vfs.DiskWriteCategory) (vfs.File, error) { return nil, errReadOnly }
func (servedFS) Link(string, string) error                              { return errReadOnly }
func (servedFS) OpenReadWrite(string, vfs.DiskWriteCategory, ...vfs.OpenOption) (vfs.File, error) {
	return nil, errReadOnly
}
func (servedFS) Remove(string) error                { return errReadOnly }
func (servedFS) RemoveAll(string) error             { return errReadOnly }
func (servedFS) Rename(string, string) error        { return errReadOnly }
func (servedFS) MkdirAll(string, os.FileMode) error { return errReadOnly }
func (servedFS) ReuseForWrite(string, string, vfs.DiskWriteCategory) (vfs.File, error) {
	return nil, errReadOnly
}
