//go:build !windows

package osfile

import "os"

// RenameOver renames from over to.
func RenameOver(from, to string) error { return os.Rename(from, to) }
