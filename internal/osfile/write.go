package osfile

import (
	"os"
	"path/filepath"
)

// WriteNew writes b to a new file at path with mode, whatever the umask;
// the file must not exist (a key never overwrites another).
func WriteNew(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Replace replaces path with b (mode 0644, whatever the umask: a server may
// read it as another user) in one rename, durably: a reader sees the old
// bytes or the new ones, and after a crash one of them. Each call has its
// own temporary file, so two writers of one path never mix their bytes.
func Replace(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = RenameOver(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncPath(filepath.Dir(path))
}
