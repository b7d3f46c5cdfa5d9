package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/productdata/pds/internal/osfile"
)

// LockName is the lock file in a snapshots directory. Pull, a follower's
// poll and Rollback hold it while they change the directory, so that two of
// them never stage, rename, prune or repoint current at once. The lock is
// the system's (osfile.LockAt: flock on Unix, LockFileEx on Windows),
// dropped when its holder exits however it exits, so it is never left
// stale, and the file itself stays between holders; its holder writes who
// it is into it, for the message of whoever waits.
const LockName = ".lock"

// lockPoll is how often a waiting caller tries the lock again.
const lockPoll = 200 * time.Millisecond

// folderLock is a held lock on a snapshots directory.
type folderLock struct {
	dir     string
	path    string
	f       *os.File
	created bool // the directory did not exist before this lock made it
}

// lockFolder takes dir's lock, waiting up to wait for another holder
// (telling progress once, when set, who that is). With create, a missing
// dir is made first, and removed again by unlock(true) if nothing but the
// lock file came to be in it.
func lockFolder(ctx context.Context, dir string, create bool, wait time.Duration, progress io.Writer) (*folderLock, error) {
	l := &folderLock{dir: dir, path: filepath.Join(dir, LockName)}
	deadline := time.Now().Add(wait)
	told, tries := false, 0
	for {
		if create {
			if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return nil, err
				}
				l.created = true
			}
		}
		f, ok, err := osfile.LockAt(l.path, false)
		if create && errors.Is(err, fs.ErrNotExist) {
			continue // the directory went with a failed pull that made it: make it again
		}
		if !create && errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such snapshots directory", dir)
		}
		if err != nil {
			return nil, fmt.Errorf("lock %s: %v", l.path, err)
		}
		if ok {
			l.f = f
			holder := fmt.Sprintf("pid %d (%s) since %s\n", os.Getpid(), command(), time.Now().UTC().Format(time.RFC3339))
			if err := f.Truncate(0); err == nil {
				f.WriteAt([]byte(holder), 0) // for the message of whoever waits; the lock holds without it
			}
			return l, nil
		}
		holder, known := holderOf(l.path)
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: %s is held by %s; another 'pds snapshot pull', 'follow' or 'rollback' is at work in %s",
				ErrLocked, l.path, holder, dir)
		}
		if tries++; !told && progress != nil && (known || tries > 5) {
			fmt.Fprintf(progress, "waiting up to %s for %s, held by %s\n", wait.Round(time.Second), l.path, holder)
			told = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(lockPoll, time.Until(deadline)+time.Millisecond)):
		}
	}
}

// command names this process for a waiter's message: the program and its
// first two arguments ("pds snapshot pull"), never the rest, which may hold
// an origin URL with credentials in it.
func command() string {
	words := append([]string{filepath.Base(os.Args[0])}, os.Args[1:min(len(os.Args), 3)]...)
	return strings.Join(words, " ")
}

// holderOf reads who holds the lock at path, as its holder wrote it just
// after taking it; known is false when it has not yet.
func holderOf(path string) (holder string, known bool) {
	b, err := os.ReadFile(path)
	if s := strings.TrimSpace(string(b)); err == nil && s != "" {
		return s, true
	}
	return "a process that has not yet said which", false
}

// unlock releases the lock. When failed and the lock made the directory,
// the directory is removed again if the lock file is all it holds, so a
// pull that failed leaves no empty directory behind.
func (l *folderLock) unlock(failed bool) {
	l.f.Truncate(0)
	remove := failed && l.created && onlyLockFile(l.dir)
	unlockFile(l.f, l.path, remove)
	if remove {
		os.Remove(l.dir) // fails, harmlessly, if a waiter has made its lock file in it again
	}
}

// unlockFile releases the lock; with remove, the lock file goes too, in the
// order osfile.Release gives, which keeps anyone from holding a lock on a
// removed file.
func unlockFile(f *os.File, path string, remove bool) {
	if remove {
		osfile.Release(f, path)
		return
	}
	osfile.Unlock(f)
	f.Close()
}

// onlyLockFile reports whether dir holds the lock file and nothing else.
func onlyLockFile(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) == 1 && entries[0].Name() == LockName
}
