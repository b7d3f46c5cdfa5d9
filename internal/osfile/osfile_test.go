package osfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// OpenRegular opens a regular file and refuses a symbolic link (even one to
// a file inside the root, which os.Root follows whatever the flags), a folder
// and a missing name.
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "file"), []byte("data"), 0o644)
	os.Mkdir(filepath.Join(dir, "folder"), 0o755)
	os.Symlink("file", filepath.Join(dir, "link"))
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, c := range []struct {
		name  string
		opens bool
	}{{"file", true}, {"link", false}, {"folder", false}, {"missing", false}} {
		f, err := OpenRegular(root, c.name)
		if err == nil {
			f.Close()
		}
		if (err == nil) != c.opens {
			t.Errorf("OpenRegular(%s): error %v, want opened %v", c.name, err, c.opens)
		}
	}
	if _, err := OpenRegular(root, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenRegular of a missing file: %v, want fs.ErrNotExist", err)
	}
}

// A lock held through one open file keeps TryLock through another from
// taking it until it is unlocked; Release lets go of the lock and removes
// the lock file, after which the lock can be taken again. (The other handle
// is closed first: Windows cannot remove a file another handle holds open.)
func TestLock(t *testing.T) {
	name := filepath.Join(t.TempDir(), "x.lock")
	open := func() *os.File {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := Lock(a); err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(b); ok || err != nil {
		t.Fatalf("TryLock while held: %v %v, want false and no error", ok, err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(b); !ok || err != nil {
		t.Fatalf("TryLock once free: %v %v", ok, err)
	}
	a.Close()
	Release(b, name)
	if _, err := os.Stat(name); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock file after Release: %v", err)
	}
	if ok, err := TryLock(open()); !ok || err != nil {
		t.Errorf("TryLock after the holder's Release: %v %v", ok, err)
	}
}

// A file renamed over another, even one of the same size and modification
// time, has another stamp; the same file stats to the same stamp. On
// Windows, whose stat has no file index or change time, every stamp is the
// zero Stamp, as StampOf says.
func TestStampOf(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{a, b} {
		os.WriteFile(p, []byte("same"), 0o644)
		os.Chtimes(p, when, when)
	}
	stamp := func(p string) Stamp {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return StampOf(st)
	}
	before := stamp(a)
	if again := stamp(a); again != before {
		t.Errorf("the same file stamps %+v, then %+v", before, again)
	}
	if err := os.Rename(b, a); err != nil {
		t.Fatal(err)
	}
	after := stamp(a)
	if runtime.GOOS == "windows" {
		if before != (Stamp{}) || after != (Stamp{}) {
			t.Errorf("stamps on Windows %+v and %+v, want the zero Stamp", before, after)
		}
		return
	}
	if after == before {
		t.Errorf("a replaced file keeps its stamp %+v", after)
	}
}

func TestFreeBytesAndSyncPath(t *testing.T) {
	dir := t.TempDir()
	if n, err := FreeBytes(dir); err != nil || n == 0 {
		t.Errorf("FreeBytes: %d, %v", n, err)
	}
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("x"), 0o644)
	for _, p := range []string{dir, p} {
		if err := SyncPath(p); err != nil {
			t.Errorf("SyncPath(%s): %v", p, err)
		}
	}
	if err := SyncPath(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SyncPath of a missing file: %v", err)
	}
}
