//go:build unix

package flood

import (
	"errors"
	"net"
	"syscall"
)

// serverClosed reports whether the server closed c, or wrote to it (a
// refusal; a held connection has nothing to read), without waiting.
func serverClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	closed := false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = n > 0 || (n == 0 && err == nil) || (err != nil && !errors.Is(err, syscall.EAGAIN))
		return true
	})
	return closed || err != nil
}
