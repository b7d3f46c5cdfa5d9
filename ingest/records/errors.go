package records

import "errors"

// The errors of records; a missing key is not an error (ok = false).
var (
	// ErrMissing is returned by Open when dir holds no records store.
	ErrMissing = errors.New("no kept records")
	// ErrDamaged is wrapped by the errors of a store whose bytes are not
	// those it was closed with: Open's check of its files (SumsName) and
	// Pebble's checksums of the blocks a read reads. The cause is wrapped
	// too.
	ErrDamaged = errors.New("the kept records are damaged")
)
