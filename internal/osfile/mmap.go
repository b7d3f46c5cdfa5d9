package osfile

import (
	"io"
	"os"
)

// ReadWhole reads the first size bytes of f into memory. It is Map's way in
// where a file cannot be mapped (mmap_other.go); it builds on every
// platform so that its callers' tests run everywhere.
func ReadWhole(f *os.File, size int) ([]byte, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return b, nil
}
