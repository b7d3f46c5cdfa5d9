package index

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// privateCopy copies src into a memfd, an anonymous file in memory that
// no other process can name, and seals it so that not even this one can
// cut, grow or write it any more. It returns the copy and a name by which
// it can be opened again. Where memfds are refused (an old kernel, a
// sandbox that forbids them) it copies src into a temporary file instead
// (tempCopy). With dir set, the copy is a temporary file in dir.
func privateCopy(src *os.File, dir string) (*os.File, string, error) {
	if dir != "" {
		return tempCopy(src, dir)
	}
	fd, err := unix.MemfdCreate("pds-"+filepath.Base(src.Name()), unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return tempCopy(src, "")
	}
	f := os.NewFile(uintptr(fd), "memfd:"+filepath.Base(src.Name()))
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return nil, "", err
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, "", fmt.Errorf("sealing the copy: %w", err)
	}
	return f, fdName(f), nil
}

// fdName names the open file f: opened, it is f's file, whatever name f
// had or has lost.
func fdName(f *os.File) string { return fmt.Sprintf("/proc/self/fd/%d", f.Fd()) }
