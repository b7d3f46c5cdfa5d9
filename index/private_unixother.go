//go:build unix && !linux

package index

import (
	"fmt"
	"os"
)

// privateCopy copies src into a temporary file that no other process can
// name (tempCopy).
func privateCopy(src *os.File, dir string) (*os.File, string, error) { return tempCopy(src, dir) }

// fdName names the open file f: opened, it is f's file, whatever name f
// had or has lost.
func fdName(f *os.File) string { return fmt.Sprintf("/dev/fd/%d", f.Fd()) }
