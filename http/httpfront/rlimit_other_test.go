//go:build !unix

package httpfront_test

import (
	"math"
	"testing"
)

// openFilesLimit returns no limit: Windows has no RLIMIT_NOFILE, and a
// process's handles are bounded only by memory.
func openFilesLimit(*testing.T) uint64 { return math.MaxUint64 }
