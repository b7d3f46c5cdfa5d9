//go:build !unix

package osfile

import "os"

// Map reads the first size bytes of f into memory where syscall.Mmap is
// missing (Windows).
func Map(f *os.File, size int) ([]byte, error) { return ReadWhole(f, size) }

// Unmap leaves b to the garbage collector.
func Unmap([]byte) error { return nil }

// Maps is whether Map maps the file (false: it reads it into memory, and a
// file cut short afterwards changes nothing read from it).
const Maps = false

// AdviseRandom does nothing where Map reads the file into memory.
func AdviseRandom([]byte) error { return nil }
