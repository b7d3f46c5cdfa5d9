//go:build unix

package kv

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only: the pages are the page
// cache's, shared by every process that serves the same snapshot.
func mapFile(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

// unmapFile releases what mapFile returned.
func unmapFile(b []byte) error { return syscall.Munmap(b) }
