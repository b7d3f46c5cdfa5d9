//go:build unix || windows

package osfile

import (
	"errors"
	"io/fs"
	"os"
)

// LockAt opens the lock file at path, creating it, and locks it: with wait
// it waits while another open file (in this process or another) holds the
// lock (Lock); without, ok is false when another holds it (TryLock). A file
// this user may not open for writing (made by another user) is opened for
// reading, which locks as well. The lock is the system's, dropped when its
// holder exits however it exits, so it is never left stale. The file locked
// is checked to be the one still at path: a holder that let go with Release
// removed it, and a lock on a removed file locks nothing; the file at path
// now is then opened and locked in turn. A missing folder is an error
// wrapping fs.ErrNotExist.
func LockAt(path string, wait bool) (f *os.File, ok bool, err error) {
	for {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if errors.Is(err, fs.ErrPermission) {
			f, err = os.Open(path)
		}
		if err != nil {
			return nil, false, err
		}
		if wait {
			ok, err = true, Lock(f)
		} else {
			ok, err = TryLock(f)
		}
		if err != nil || !ok {
			f.Close()
			return nil, false, err
		}
		held, herr := f.Stat()
		named, nerr := os.Stat(path)
		if herr == nil && nerr == nil && os.SameFile(held, named) {
			return f, true, nil
		}
		f.Close()
		if herr != nil {
			return nil, false, herr
		}
		if nerr != nil && !errors.Is(nerr, fs.ErrNotExist) {
			return nil, false, nerr
		}
	}
}
