//go:build linux || darwin

package osfile

import "syscall"

// FreeBytes returns the bytes free for unprivileged users on the file
// system that holds dir.
func FreeBytes(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
