package snapshots

import (
	"errors"
	"fmt"
)

// The errors of package snapshots. A caller tells them apart with
// errors.Is; each failure wraps its cause as well (an os or kv error), so
// that errors.Is finds that too.
var (
	// ErrInvalid is wrapped by every failure to verify or open a snapshot:
	// a manifest that does not read or is of a format this pds does not
	// read, a file missing, unlisted or not matching its checksum, a store
	// or index that does not open. The snapshot is at fault, not the
	// caller; a replica that meets it while taking a build refuses the
	// build (package fleet's ErrRefused wraps this error then).
	ErrInvalid = errors.New("invalid snapshot")

	// ErrSignature is wrapped by every signature failure: a missing,
	// malformed or foreign signature, or one that does not match the
	// manifest. It wraps ErrInvalid, so a caller that refuses invalid
	// snapshots refuses these too.
	ErrSignature = fmt.Errorf("%w (signature)", ErrInvalid)

	// errChanged is the cause of a read refused because its file changed
	// since the snapshot was opened (guard.go).
	errChanged = errors.New("changed since it was opened")

	// errReadAgain says that a file's change time moved while it was read:
	// the bytes read may predate the chunks' checks, so they are read again
	// (guard.go); it never leaves the package.
	errReadAgain = errors.New("read again")

	// ErrClosed is the error of a search, or of WaitIndex, on a snapshot
	// closed before its search index was open: its check was stopped.
	ErrClosed = errors.New("snapshots: the snapshot was closed")

	// errLocked is lockExclusive's error when a live process holds a
	// build's temporary folder (tempdir.go).
	errLocked = errors.New("locked by a live process")
)
