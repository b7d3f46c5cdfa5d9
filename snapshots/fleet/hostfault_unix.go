//go:build unix

package fleet

import "syscall"

var (
	hostErrnos    = []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.EIO}
	noSpaceErrnos = []error{syscall.ENOSPC, syscall.EDQUOT}
)
