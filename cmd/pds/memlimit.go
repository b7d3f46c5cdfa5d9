package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// memoryLimit is the memory limit of the cgroup this process runs in, in
// bytes: cgroup v2's memory.max, or v1's memory.limit_in_bytes, found
// through /proc/self/cgroup (Linux only). ok is false when there is no
// limit or it cannot be read. The kernel charges the page cache a process
// reads to its cgroup, so a snapshot read through the page cache shares the
// limit with the server's own memory.
func memoryLimit() (limit int64, ok bool) {
	return memoryLimitIn("/proc/self/cgroup", "/sys/fs/cgroup")
}

// memoryLimitIn is memoryLimit with the process's cgroup list read from
// cgroupFile and the cgroup file systems mounted under sys.
func memoryLimitIn(cgroupFile, sys string) (limit int64, ok bool) {
	b, err := os.ReadFile(cgroupFile)
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			if n, ok := readLimit(sys, parts[2], "memory.max"); ok {
				return n, true
			}
		case hasController(parts[1], "memory"):
			if n, ok := readLimit(filepath.Join(sys, "memory"), parts[2], "memory.limit_in_bytes"); ok {
				return n, true
			}
		}
	}
	return 0, false
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// noLimit is the least of the values cgroup v1 reports for no limit (the
// largest multiple of the page size that fits an int64).
const noLimit = 1 << 62

// readLimit reads the limit file name of the cgroup at rel under root, or
// at root itself when rel is not there (in a container, /proc/self/cgroup
// names the path on the host while the container sees its own cgroup at
// the root).
func readLimit(root, rel, name string) (int64, bool) {
	for _, dir := range []string{filepath.Join(root, rel), root} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= noLimit {
			return 0, false
		}
		return n, true
	}
	return 0, false
}
