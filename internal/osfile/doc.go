// Package osfile holds the few file operations whose system calls differ by
// platform, each behind a build tag with a fallback, so that keys and
// snapshots build and behave alike on Linux, macOS and Windows:
//
//   - Lock, TryLock, Unlock and Release: an exclusive lock on an open file,
//     flock(2) on Unix and LockFileEx on Windows. Both are dropped by the
//     system when the holder exits, however it exits. LockAt locks a lock
//     file by its path, making sure the file locked is still the one there.
//   - Owner: the user and group ids that own a file, on Unix; Windows files
//     have none (an access list instead), and keeping them is left out there.
//   - StampOf: the device, inode and change time of a file, which notice a
//     file replaced or rewritten where its size and modification time do
//     not change. Linux and macOS have them; elsewhere the stamp is zero and
//     callers compare size, modification time and mode only.
//   - FreeBytes: the space a folder's file system has free for this user,
//     statfs(2) on Linux and macOS, GetDiskFreeSpaceEx on Windows.
//   - OpenRegular: open a regular file for reading, never through a
//     symbolic link. O_NOFOLLOW cannot say that: Windows lacks it, and an
//     os.Root resolves a link inside the root itself whatever the flags. So
//     it checks the file with Lstat and then that what it opened is that
//     file, the same way everywhere.
//   - Map and Unmap: a file's bytes mapped read-only (mmap(2)) on Unix, read
//     into memory elsewhere.
//   - SyncPath: flush a file or a folder to stable storage. Windows cannot
//     flush a folder (its file systems journal the names) and flushes a file
//     only through a handle open for writing.
//   - Copy: a new file with another's bytes, by the kernel where it can
//     (copy_file_range on Linux, a clone on XFS and Btrfs), for the builds
//     that keep what they share with an earlier one.
//
// # Why not a library
//
// github.com/gofrs/flock locks a path and keeps its file handle to itself,
// but the callers here must check that the file they locked is still the one
// at its path (another process may have removed it in between) and remove
// it while holding it; golang.org/x/sys gives the system calls, which is
// what these files use. github.com/rogpeppe/go-internal/lockedfile has no
// lock that fails at once rather than waits (a pull that finds its folder
// busy must say so, and a build must pass over a live build's temporary),
// takes a shared lock through a file open for reading (LockAt must lock a
// file another user made, which it can only read), and on Windows locks the
// whole file, so that a waiter cannot read who holds it. The rest is a line
// or two a platform.
package osfile
