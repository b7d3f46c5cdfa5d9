package snapshots

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/productdata/pds/internal/osfile"
)

// A build writes into a hidden temporary folder beside --out,
// ".NAME.tmp-BUILDID", and owns it through an exclusive lock (flock on Unix,
// LockFileEx on Windows; see internal/osfile) on the file
// ".NAME.tmp-BUILDID.lock" beside it, held for the whole build. The kernel
// drops the lock when the process ends however it ends (even SIGKILL), so a
// temporary whose lock can be taken belongs to no live build: it is what a
// killed build left, and the next build beside it removes it. A lock is used
// rather than a recorded pid because a pid is reused after the process dies
// and says nothing about processes on another host sharing the folder; the
// lock file sits beside the folder, not in it, so that it is never part of
// the published snapshot.

// tempPattern matches the name of a build's temporary folder.
var tempPattern = regexp.MustCompile(`^\..+\.tmp-[0-9A-HJKMNP-TV-Z]{26}$`)

// tempDir is a claimed temporary folder.
type tempDir struct {
	path string
	lock *os.File
}

// claimTemp creates the temporary folder of build id beside out, locked.
func claimTemp(out, id string) (*tempDir, error) {
	path := filepath.Join(filepath.Dir(filepath.Clean(out)), "."+filepath.Base(out)+".tmp-"+id)
	lock, err := lockExclusive(path+".lock", true)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		unlock(lock, path+".lock")
		return nil, fmt.Errorf("output: %w", err)
	}
	return &tempDir{path: path, lock: lock}, nil
}

// release removes the folder (nothing, once it was published) and its lock.
func (t *tempDir) release() {
	os.RemoveAll(t.path)
	unlock(t.lock, t.path+".lock")
}

// lockExclusive locks the lock file name (osfile.LockAt). With wait it
// blocks until the lock is free; without, it returns errLocked when another
// holds it.
func lockExclusive(name string, wait bool) (*os.File, error) {
	f, ok, err := osfile.LockAt(name, wait)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if !ok {
		return nil, errLocked
	}
	return f, nil
}

// unlock lets the lock go and removes its file, in the order that keeps
// another process from holding a lock on a removed file (osfile.Release).
func unlock(f *os.File, name string) {
	osfile.Release(f, name)
}

// removeStale removes the temporary folders beside out that earlier builds
// left (any build's, whatever its --out) and no live process owns, with
// their lock files, and lock files left without a folder. It returns the
// folders it removed.
func removeStale(out string) ([]string, error) {
	parent := filepath.Dir(filepath.Clean(out))
	entries, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		isLock := filepath.Ext(name) == ".lock" && tempPattern.MatchString(name[:len(name)-len(".lock")])
		if !(e.IsDir() && tempPattern.MatchString(name)) && !isLock {
			continue
		}
		dir := filepath.Join(parent, name)
		if isLock {
			dir = dir[:len(dir)-len(".lock")]
			if _, err := os.Lstat(dir); err == nil {
				continue // handled with its folder
			}
		}
		lock, err := lockExclusive(dir+".lock", false)
		if errors.Is(err, errLocked) {
			continue // a live build owns it
		}
		if err != nil {
			return removed, fmt.Errorf("output: stale temporary %s: %w", dir, err)
		}
		if _, err := os.Lstat(dir); err == nil {
			if err := os.RemoveAll(dir); err != nil {
				unlock(lock, dir+".lock")
				return removed, fmt.Errorf("output: removing stale temporary %s: %w", dir, err)
			}
			removed = append(removed, dir)
		}
		unlock(lock, dir+".lock")
	}
	return removed, nil
}

// syncTree flushes every file and folder under dir to stable storage, so
// that the rename that publishes the snapshot can never expose a folder
// whose files a power loss would leave empty or torn.
func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		return syncPath(p)
	})
}

// syncPath fsyncs one file or folder (a folder only where the platform
// can).
func syncPath(p string) error {
	if err := osfile.SyncPath(p); err != nil {
		return fmt.Errorf("sync %s: %w", p, err)
	}
	return nil
}

// The modes of a published snapshot: folders 0755 and files 0644, whatever
// the umask and whatever the libraries created them with (Bleve makes its
// folder 0700 and its files 0600). A snapshot holds no secret, only the data
// the service answers every key holder with; what protects it is the
// manifest's checksums and signature, not its modes; and the user that
// serves it (a container's uid 65532, a systemd unit's user) is seldom the
// one that built it. Publish sets them on a build, and a pull on the build
// it fetched.
const (
	snapshotDirMode  fs.FileMode = 0o755
	snapshotFileMode fs.FileMode = 0o644
)

// SetModes gives every folder and regular file under dir the modes of a
// published snapshot (snapshotDirMode, snapshotFileMode): Writer.Publish
// sets them on a build, and a pull on the build it fetched before it
// renames it into place.
func SetModes(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Chmod(p, snapshotDirMode)
		case d.Type().IsRegular():
			return os.Chmod(p, snapshotFileMode)
		}
		return nil
	})
}

// Temp is a temporary folder beside a path that a build writes besides its
// snapshot (ingest's kept records), owned through the same lock as the
// snapshot's own temporary: a killed build's is removed by the next build
// beside it, and a live build's never is.
type Temp struct {
	Path string
	t    *tempDir
}

// ClaimTemp creates the temporary folder of build id for out, beside it and
// locked. The caller renames Path to out when the build is done, then calls
// Release, which removes what is left.
func ClaimTemp(out, id string) (*Temp, error) {
	t, err := claimTemp(out, id)
	if err != nil {
		return nil, err
	}
	return &Temp{Path: t.path, t: t}, nil
}

// Release removes the folder, if it was not renamed, and its lock.
func (t *Temp) Release() { t.t.release() }
