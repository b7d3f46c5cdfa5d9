package osfile

import (
	"fmt"
	"io"
	"os"
)

// Stamp is what a file's metadata says beyond its size, mode and
// modification time: its device, inode and change time. It is zero where
// the platform does not give them (see StampOf).
type Stamp struct {
	Dev, Ino uint64
	Ctime    int64 // nanoseconds since 1970
}

// OpenRegular opens name in root for reading when it is a regular file and
// not a symbolic link. It is portable: it checks the file with Lstat, opens
// it, and then checks that the file it opened is the one it checked, so a
// symbolic link put in its place in between is refused too.
func OpenRegular(root *os.Root, name string) (*os.File, error) {
	before, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", name, before.Mode().Type())
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	opened, err := f.Stat()
	if err == nil && !os.SameFile(before, opened) {
		err = fmt.Errorf("%s: replaced while it was being opened", name)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Link makes to a hard link of the file from and reports whether it did;
// where it cannot (to is on another file system), the caller copies. A
// variable so that a test can make every link fail, as across file systems.
var Link = func(from, to string) bool { return os.Link(from, to) == nil }

// LinkOrCopy makes to a hard link of the file from (Link), or a copy
// (Copy) where it cannot be one.
func LinkOrCopy(from, to string) error {
	if Link(from, to) {
		return nil
	}
	return Copy(from, to)
}

// Copy makes to, which must not exist, a copy of the file from, and flushes
// it to stable storage before it returns, so that a copy a caller renames or
// lists afterwards is never found empty or torn after a power loss. io.Copy
// between two files is copy_file_range on Linux: the kernel copies, and file
// systems that share blocks (XFS, Btrfs) clone instead.
func Copy(from, to string) error {
	r, err := os.Open(from)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	if err := w.Sync(); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
