//go:build unix

package httpfront_test

import (
	"syscall"
	"testing"
)

// openFilesLimit raises this process's RLIMIT_NOFILE to its hard limit and
// returns it.
func openFilesLimit(t *testing.T) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < lim.Max { // Go raises it at start on Linux; say so here for other systems
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
	}
	return uint64(lim.Cur)
}
