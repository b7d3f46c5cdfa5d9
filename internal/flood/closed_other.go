//go:build !unix

package flood

import (
	"errors"
	"net"
	"os"
	"time"
)

// serverClosed reports whether the server closed c, or wrote to it (a
// refusal; a held connection has nothing to read). Where recv(2) cannot
// peek without waiting (Windows), it reads with a deadline a millisecond
// away: a byte read is lost, but a connection that has one is a refusal and
// is closed anyway.
func serverClosed(c net.Conn) bool {
	if err := c.SetReadDeadline(time.Now().Add(time.Millisecond)); err != nil {
		return true
	}
	var b [1]byte
	n, err := c.Read(b[:])
	if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	return c.SetReadDeadline(time.Time{}) != nil
}
