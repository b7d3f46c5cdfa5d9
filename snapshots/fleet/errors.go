package fleet

import "errors"

// The errors of package fleet. A caller tells them apart with errors.Is;
// each failure wraps its cause as well (a snapshots.ErrInvalid, an os or
// network error), so that errors.Is finds that too.
var (
	// ErrRefused is wrapped by every reason a build is not taken, or not
	// published, that trying again will not change: a bad signature or
	// checksum (then snapshots.ErrInvalid is wrapped too), a downgrade, a
	// build rolled back from, a self-test the build's own bytes fail, a
	// delta or bundle that does not make the signed build. Other errors (the
	// network, a full disk, this host short of file descriptors or memory
	// while it checks the build: see hostFault) are worth retrying. A
	// snapshot that fails snapshots.Open is invalid (snapshots.ErrInvalid);
	// a build a replica declines to take is refused (this error), whether
	// its snapshot is valid or not.
	ErrRefused = errors.New("build refused")

	// ErrNoSpace is returned when the snapshots directory's file system
	// lacks room for the build: before anything is fetched, or when it
	// fills while the build lands (then what was staged is removed).
	ErrNoSpace = errors.New("not enough free disk space")

	// ErrLocked is returned when another pull, follow or rollback holds a
	// snapshots directory's lock for longer than the caller would wait.
	ErrLocked = errors.New("snapshots directory is locked")

	// ErrNotFound is returned by Origin.Open for a name the origin lacks.
	ErrNotFound = errors.New("not found at the origin")

	// errNoDelta says the origin has no delta from a build this replica
	// keeps, or none cheaper than the build itself. Not a failure: the
	// pull goes whole.
	errNoDelta = errors.New("no usable delta")

	// errDeltaTooLarge says the delta being written passed its limit.
	errDeltaTooLarge = errors.New("the delta is larger than its limit")

	// errMismatch says a file a delta made is not the one the signed
	// manifest lists.
	errMismatch = errors.New("does not match the signed manifest")

	// errStalled says an https origin sent nothing, or too little, for
	// stallLimit: a stalled or deliberately slow origin. Worth retrying.
	errStalled = errors.New("the origin stalled")
)
