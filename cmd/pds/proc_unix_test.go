//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// sighup sends SIGHUP to this process, whose in-process server then rereads
// its keys file and checks its snapshot.
func sighup(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

// ownGroup starts cmd in a process group of its own, killed whole when cmd
// is cancelled: what it runs may leave a background server.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

// killGroup kills the process group ownGroup gave cmd.
func killGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
