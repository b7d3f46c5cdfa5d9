//go:build windows

package fleet

import "golang.org/x/sys/windows"

var (
	hostErrnos = []error{windows.ERROR_TOO_MANY_OPEN_FILES, windows.ERROR_NOT_ENOUGH_MEMORY, windows.ERROR_OUTOFMEMORY,
		windows.ERROR_NO_SYSTEM_RESOURCES, windows.ERROR_IO_DEVICE}
	noSpaceErrnos = []error{windows.ERROR_DISK_FULL, windows.ERROR_HANDLE_DISK_FULL, windows.ERROR_DISK_QUOTA_EXCEEDED}
)
