package osfile

import (
	"fmt"
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
