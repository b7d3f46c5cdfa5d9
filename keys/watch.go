package keys

import (
	"context"
	"os"
	"syscall"
	"time"
)

// Watcher notices when a keys file changes: it compares the file's device,
// inode, size, modification and change times with what it saw last. Every
// 'pds keys' command renames a new file into place, which changes the inode;
// an edit in place changes the times. It polls (one stat a call) rather than
// using inotify so that it works the same on every file system, including
// network and container volumes, with no extra dependency.
type Watcher struct {
	path string
	last fileState
}

// fileState is what Watcher compares; the zero value is "no file".
type fileState struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
	exists       bool
}

// NewWatcher starts watching path from its present state: only later changes
// are reported.
func NewWatcher(path string) *Watcher {
	return &Watcher{path: path, last: stateOf(path)}
}

func stateOf(path string) fileState {
	st, err := os.Stat(path)
	if err != nil {
		return fileState{}
	}
	s := fileState{size: st.Size(), mtime: st.ModTime().UnixNano(), exists: true}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino = uint64(sys.Dev), sys.Ino
		s.ctime = sys.Ctim.Sec*int64(time.Second) + sys.Ctim.Nsec
	}
	return s
}

// Changed reports whether the file changed (appeared, disappeared, was
// replaced or written) since the last call or NewWatcher. It is not safe for
// concurrent use.
func (w *Watcher) Changed() bool {
	now := stateOf(w.path)
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
