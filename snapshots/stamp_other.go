//go:build !unix

package snapshots

import "os"

// stampOf has no device, inode or change time where the system has no
// Stat_t: size and modification time must do (docs/snapshots.md).
func stampOf(st os.FileInfo) stamp {
	return stamp{size: st.Size(), mtime: st.ModTime().UnixNano(), mode: st.Mode()}
}
