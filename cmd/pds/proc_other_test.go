//go:build !unix

package main

import (
	"os/exec"
	"testing"
)

// sighup fails the test: this platform has no SIGHUP, and pds serve rereads
// its keys file here only by its --watch poll.
func sighup(t *testing.T) {
	t.Helper()
	t.Fatal("this platform has no SIGHUP")
}

// ownGroup leaves cmd as it is: without process groups, cancelling cmd
// kills cmd alone.
func ownGroup(*exec.Cmd) {}

// killGroup kills cmd's process.
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
