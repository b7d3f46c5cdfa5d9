package kv

import (
	"io"
	"os"
)

// readWhole reads the first size bytes of f into memory. It is the point
// index's way in where a file cannot be mapped (mmap_other.go); it builds on
// every platform so that its tests run everywhere.
func readWhole(f *os.File, size int) ([]byte, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return b, nil
}
