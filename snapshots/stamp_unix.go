//go:build unix

package snapshots

import (
	"os"
	"syscall"
)

func stampOf(st os.FileInfo) stamp {
	s := stamp{size: st.Size(), mtime: st.ModTime().UnixNano(), mode: st.Mode()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino = uint64(sys.Dev), uint64(sys.Ino)
		s.ctime = ctimeOf(sys)
	}
	return s
}
