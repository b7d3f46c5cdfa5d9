//go:build unix

package index

import (
	"io"
	"os"
)

// tempCopy copies src into a new file in dir (the temporary folder: "")
// whose name is removed at once: no other process can open it by name then.
// It returns the copy and a name by which it can be opened again.
func tempCopy(src *os.File, dir string) (*os.File, string, error) {
	f, err := os.CreateTemp(dir, "pds-segment-*")
	if err != nil {
		return nil, "", err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, "", err
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return nil, "", err
	}
	return f, fdName(f), nil
}
