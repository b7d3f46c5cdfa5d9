//go:build unix && !aix && !solaris

package snapshots

import (
	"errors"
	"os"
	"syscall"
)

// On Unix the lock is flock(2) on the lock file: the kernel releases it
// when its holder exits, however it exits, so a lock is never left stale
// and the file itself stays between holders. (AIX and Solaris, whose
// syscall package lacks flock, take the fallback in lock_other.go.)
const staleHint = ""

// tryLock takes the lock at path without waiting; ok is false when another
// open file (in this process or another) holds it.
func tryLock(path string) (f *os.File, ok bool, err error) {
	for {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if errors.Is(err, os.ErrPermission) {
			// Made by another user (a rollback run as root, say): a
			// read-only descriptor locks as well; only the holder's
			// note for waiters goes unwritten.
			f, err = os.Open(path)
		}
		if err != nil {
			return nil, false, err
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, false, nil
		}
		if err != nil {
			f.Close()
			return nil, false, err
		}
		// The holder before may have removed the file (unlock with remove)
		// after this open: a lock on a removed file locks nothing.
		held, herr := f.Stat()
		named, nerr := os.Stat(path)
		if herr == nil && nerr == nil && os.SameFile(held, named) {
			return f, true, nil
		}
		f.Close()
		if herr != nil {
			return nil, false, herr
		}
		if nerr != nil && !errors.Is(nerr, os.ErrNotExist) {
			return nil, false, nerr
		}
		// Open what is at path now (a missing directory is the caller's
		// to handle).
	}
}

// unlockFile releases the lock; with remove, the lock file is removed first,
// while still held, so that no one locks it after the release and before the
// removal.
func unlockFile(f *os.File, path string, remove bool) {
	if remove {
		os.Remove(path)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}
