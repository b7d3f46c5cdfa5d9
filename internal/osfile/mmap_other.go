//go:build !unix

package osfile

import "os"

// Map reads the first size bytes of f into memory where syscall.Mmap is
// missing (Windows).
func Map(f *os.File, size int) ([]byte, error) { return ReadWhole(f, size) }

// Unmap leaves b to the garbage collector.
func Unmap([]byte) error { return nil }
