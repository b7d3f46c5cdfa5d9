package snapshots

import (
	"fmt"
	"os"

	"github.com/productdata/pds/internal/osfile"
)

// stamp is what a look at a file tells of it without reading it: a file
// replaced, cut or written gets another one (on Unix, the change time moves
// with every write and only root can set it back).
type stamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // Unix nanoseconds
	mode         os.FileMode
}

// sameBytes reports whether b differs from a in its change time alone,
// which a hard link made or removed moves without a write.
func (a stamp) sameBytes(b stamp) bool {
	a.ctime = b.ctime
	return a == b
}

// stampOf is st's stamp. Device, inode and change time come from
// osfile.StampOf, which has them on Linux and macOS; elsewhere (Windows)
// they are zero and size, mode and modification time must do
// (docs/platforms.md).
func stampOf(st os.FileInfo) stamp {
	o := osfile.StampOf(st)
	return stamp{dev: o.Dev, ino: o.Ino, size: st.Size(), mtime: st.ModTime().UnixNano(), ctime: o.Ctime, mode: st.Mode()}
}

// diff says how b differs from a, for a message.
func (a stamp) diff(b stamp) string {
	switch {
	case a.dev != b.dev || a.ino != b.ino:
		return "replaced by another file"
	case a.size != b.size:
		return fmt.Sprintf("size %d, was %d", b.size, a.size)
	case a.mtime != b.mtime || a.ctime != b.ctime:
		return "written to"
	}
	return "mode changed"
}
