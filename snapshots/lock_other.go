//go:build !unix || aix || solaris

package snapshots

import (
	"errors"
	"io/fs"
	"os"
)

// Where flock(2) is missing, the lock file's existence is the lock: it is
// created exclusively and removed on release. A holder that is killed
// leaves it behind, so the message says what to do.
const staleHint = "; if that process is gone, remove the lock file by hand"

// tryLock takes the lock at path without waiting; ok is false when the
// lock file exists.
func tryLock(path string) (f *os.File, ok bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return f, true, nil
}

// unlockFile releases the lock by removing the lock file; remove changes
// nothing here.
func unlockFile(f *os.File, path string, remove bool) {
	f.Close()
	os.Remove(path)
}
