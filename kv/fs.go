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

// errReadOnly is what a served store's file system answers to any write.
var errReadOnly = errors.New("kv: the store is opened read-only")

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
}

func newServedFS(dir string, allowed []string) servedFS {
	f := servedFS{FS: vfs.Default, dir: filepath.Clean(dir)}
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
	return f.FS.Open(name, opts...)
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
