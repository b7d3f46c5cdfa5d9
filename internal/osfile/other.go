//go:build !linux && !darwin && !windows

package osfile

import (
	"errors"
	"os"
)

// StampOf returns the zero Stamp: this platform's file information is not
// read here.
func StampOf(os.FileInfo) Stamp { return Stamp{} }

// FreeBytes is not known on this platform: it returns errors.ErrUnsupported,
// and callers go without the check.
func FreeBytes(string) (uint64, error) { return 0, errors.ErrUnsupported }
