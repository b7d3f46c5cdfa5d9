package keys

import (
	"context"
	"os"
	"time"

	"github.com/productdata/pds/internal/osfile"
)

// Watcher notices when a keys file changes: it compares the file's size,
// mode, modification time and, where the platform gives them (Linux, macOS),
// device, inode and change time with what it saw last. Every 'pds keys'
// command renames a new file into place, which changes the inode and the
// modification time; an edit in place changes the times. It polls (one stat
// a call) rather than using inotify so that it works the same on every
// platform and file system, including network and container volumes, with
// no extra dependency.
type Watcher struct {
	path  string
	stamp func(os.FileInfo) osfile.Stamp
	last  fileState
}

// fileState is what Watcher compares; the zero value is "no file".
type fileState struct {
	stamp  osfile.Stamp
	size   int64
	mode   os.FileMode
	mtime  int64
	exists bool
}

// NewWatcher starts watching path from its present state: only later changes
// are reported.
func NewWatcher(path string) *Watcher {
	return newWatcher(path, osfile.StampOf)
}

// newWatcher is NewWatcher reading device, inode and change time through
// stamp.
func newWatcher(path string, stamp func(os.FileInfo) osfile.Stamp) *Watcher {
	w := &Watcher{path: path, stamp: stamp}
	w.last = w.state()
	return w
}

func (w *Watcher) state() fileState {
	st, err := os.Stat(w.path)
	if err != nil {
		return fileState{}
	}
	return fileState{stamp: w.stamp(st), size: st.Size(), mode: st.Mode(), mtime: st.ModTime().UnixNano(), exists: true}
}

// Changed reports whether the file changed (appeared, disappeared, was
// replaced or written) since the last call or NewWatcher. It is not safe for
// concurrent use.
func (w *Watcher) Changed() bool {
	now := w.state()
	if now == w.last {
		return false
	}
	w.last = now
	return true
}

// Run calls changed after every check, every interval, that finds the file
// changed, until ctx is done. changed runs on Run's goroutine; a slow one
// delays the next check, never overlaps it.
func (w *Watcher) Run(ctx context.Context, every time.Duration, changed func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if w.Changed() {
				changed()
			}
		}
	}
}
