//go:build unix

package osfile

import (
	"os"
	"syscall"
)

// Map maps the first size bytes of f read-only: the pages are the page
// cache's, shared by every process that reads the same file.
func Map(f *os.File, size int) ([]byte, error) {
	if size == 0 {
		return []byte{}, nil
	}
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

// Unmap releases what Map returned.
func Unmap(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return syscall.Munmap(b)
}

// Maps is whether Map maps the file (true: a file cut short under the
// mapping faults the read that reaches past its end).
const Maps = true
