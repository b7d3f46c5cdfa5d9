//go:build unix

package snapshots

import "syscall"

var (
	hostErrnos    = []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.EIO}
	noSpaceErrnos = []error{syscall.ENOSPC, syscall.EDQUOT}
)
