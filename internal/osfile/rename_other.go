//go:build !windows

package osfile

import "os"

// RenameOver renames from over to.
func RenameOver(from, to string) error { return os.Rename(from, to) }

// ReadFile reads the file name whole (os.ReadFile: a rename may replace a
// file while it is read).
func ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }
