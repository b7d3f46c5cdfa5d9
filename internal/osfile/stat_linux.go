package osfile

import (
	"os"
	"syscall"
)

// StampOf returns fi's device, inode and change time.
func StampOf(fi os.FileInfo) Stamp {
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Stamp{}
	}
	sec, nsec := sys.Ctim.Unix()
	return Stamp{Dev: uint64(sys.Dev), Ino: uint64(sys.Ino), Ctime: sec*1e9 + nsec}
}
