//go:build !unix

package kv

import "os"

// mapFile reads the first size bytes of f into memory: the point index is
// not mapped where syscall.Mmap is missing (Windows).
func mapFile(f *os.File, size int) ([]byte, error) { return readWhole(f, size) }

// unmapFile leaves b to the garbage collector.
func unmapFile([]byte) error { return nil }
