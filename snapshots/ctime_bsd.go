//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package snapshots

import "syscall"

func ctimeOf(s *syscall.Stat_t) int64 { return s.Ctimespec.Sec*1e9 + s.Ctimespec.Nsec }
