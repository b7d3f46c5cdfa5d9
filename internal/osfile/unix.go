//go:build unix

package osfile

import (
	"errors"
	"os"
	"syscall"
)

// Lock takes an exclusive flock(2) on f, waiting while another open file
// (in this process or another) holds it.
func Lock(f *os.File) error {
	return flock(f, syscall.LOCK_EX)
}

// TryLock takes an exclusive flock(2) on f without waiting; ok is false
// when another open file holds it.
func TryLock(f *os.File) (ok bool, err error) {
	err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// Unlock releases the lock on f; closing f releases it too.
func Unlock(f *os.File) error {
	return flock(f, syscall.LOCK_UN)
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// Release removes the lock file name while still holding its lock f, then
// closes f, so that no one takes the lock of a file about to go: a process
// that opened it before the removal finds, once it holds the lock, that it
// is no longer the file at name.
func Release(f *os.File, name string) {
	os.Remove(name)
	f.Close()
}

// Owner returns the user and group that own the file fi describes.
func Owner(fi os.FileInfo) (uid, gid int, ok bool) {
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(sys.Uid), int(sys.Gid), true
}

// SyncPath flushes the file or folder at p to stable storage.
func SyncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
