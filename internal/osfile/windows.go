//go:build windows

package osfile

import (
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// A lock is one byte at offset 1<<62, far past the end of any lock file.
// Windows locks are mandatory: a locked range cannot be read by another
// handle, and locking past the end (which Windows allows) leaves what the
// holder writes at the start of the file readable by those who wait (the
// snapshots directory's lock names its holder that way).
const (
	lockOffsetLow  = 0
	lockOffsetHigh = 1 << 30 // the high 32 bits of 1<<62
	lockLength     = 1
)

// Lock takes an exclusive LockFileEx lock on f, waiting while another handle
// (in this process or another) holds it.
func Lock(f *os.File) error {
	return lockFileEx(f, windows.LOCKFILE_EXCLUSIVE_LOCK)
}

// TryLock takes an exclusive LockFileEx lock on f without waiting; ok is
// false when another handle holds it.
func TryLock(f *os.File) (ok bool, err error) {
	err = lockFileEx(f, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

func lockFileEx(f *os.File, flags uint32) error {
	ol := &windows.Overlapped{Offset: lockOffsetLow, OffsetHigh: lockOffsetHigh}
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, lockLength, 0, ol)
}

// Unlock releases the lock on f.
func Unlock(f *os.File) error {
	ol := &windows.Overlapped{Offset: lockOffsetLow, OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, lockLength, 0, ol)
}

// Release lets go of the lock f on the lock file name and then removes it.
// Windows cannot remove a file that is open, so the order is the reverse of
// Unix's; a process that opened the file in between keeps it open, so the
// removal fails, harmlessly, and that process holds the lock on a file still
// at name.
func Release(f *os.File, name string) {
	Unlock(f)
	f.Close()
	os.Remove(name)
}

// SyncPath flushes the file at p to stable storage through a handle open
// for writing, which Windows requires; a folder it leaves alone, as its file
// systems journal the names in it and have no call to flush a folder.
func SyncPath(p string) error {
	st, err := os.Stat(p)
	if err != nil || st.IsDir() {
		return err
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// FreeBytes returns the bytes free for this user on the volume that holds
// dir.
func FreeBytes(dir string) (uint64, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, err
	}
	var free, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, &total, &totalFree); err != nil {
		return 0, err
	}
	return free, nil
}

// Owner reports no owner: Windows files have an access list, not a user and
// group id, and os.Chown does not apply to them.
func Owner(os.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

// StampOf returns the zero Stamp: the file information Windows gives with a
// directory listing or a stat has no file index or change time.
func StampOf(os.FileInfo) Stamp { return Stamp{} }

// RenameOver renames from over to. Windows refuses to replace a file that
// another handle has open without FILE_SHARE_DELETE (which Go's os.Open
// does not ask for), even for the instant a reader holds it; the rename is
// tried again for up to a second while it is refused so.
func RenameOver(from, to string) error {
	var err error
	for wait := time.Millisecond; ; wait *= 2 {
		err = os.Rename(from, to)
		if err == nil || !(errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)) || wait > 512*time.Millisecond {
			return err
		}
		time.Sleep(wait)
	}
}

// ReadFile reads the file name whole. It opens it sharing delete access as
// well as reading and writing, so that a writer may replace it by rename
// (RenameOver) while it is read, as on Unix; Go's os.Open does not share
// delete access, and a replace then fails with "Access denied".
func ReadFile(name string) ([]byte, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(h), name)
	defer f.Close()
	return io.ReadAll(f)
}
