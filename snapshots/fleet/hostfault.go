package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// hostFault reports whether err comes from this host rather than from a
// build's bytes: too many open files, no memory, a full disk or quota, an
// I/O error of the local disk, a timeout. Such a failure says nothing about
// the build, so it never refuses one: the build is kept (or fetched again)
// and the next pull or poll tries again. Only what the build's own bytes
// cause refuses it: a checksum or signature that does not match, a format
// this pds does not read, content that does not decode, a self-test answer
// that is wrong.
func hostFault(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	for _, e := range hostErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	return noSpace(err)
}

// probeFiles is how many files shortOfFiles opens: more than a self-test
// holds open at once, so that the files it let go at its end do not hide
// the shortage it ran into.
const probeFiles = 64

// selfTestFault reports whether a self-test of a build in dir that failed
// with err failed for a fault of this host: hostFault, or this process
// cannot open probeFiles more files now. The second catches a shortage
// inside a library that drops the cause: Bleve, short of file descriptors,
// skips the index segment it cannot open and then reports a mapping it
// cannot parse.
func selfTestFault(err error, dir string) bool {
	return hostFault(err) || shortOfFiles(dir)
}

// shortOfFiles reports whether opening probeFiles more files (dir, again
// and again) fails for a fault of this host.
func shortOfFiles(dir string) bool {
	var open []*os.File
	defer func() {
		for _, f := range open {
			f.Close()
		}
	}()
	for range probeFiles {
		f, err := os.Open(dir)
		if err != nil {
			return hostFault(err)
		}
		open = append(open, f)
	}
	return false
}

// noSpace reports whether err is a full file system or quota.
func noSpace(err error) bool {
	for _, e := range noSpaceErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// hostFailed is the error of a check of build id that failed for a fault of
// this host (err, a hostFault): the build is not refused. then says what
// comes next.
func hostFailed(id string, err error, then string) error {
	return fmt.Errorf("build %s was not taken: this host failed to check it (%w); the build is not at fault, %s", id, err, then)
}

// pullAgain is what follows a pull's hostFailed.
const pullAgain = "and the next pull or apply checks it again"
