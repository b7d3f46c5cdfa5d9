//go:build unix

package osfile

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
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

// AdviseRandom tells the kernel that b, a mapping Map returned, is read
// at random: a page fault reads that page alone, not the pages around it
// (the read-around that suits a file read in order, and that fills a
// small page cache with what no lookup wants).
func AdviseRandom(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return unix.Madvise(b, unix.MADV_RANDOM)
}
