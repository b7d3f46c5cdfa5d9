package trust

import (
	"errors"
	"fmt"
)

// The errors of package trust; each failure wraps its cause as well.
var (
	// ErrUntrusted is wrapped by every statement that does not hold:
	// signed by too few of the keys its role names (a retired key, another
	// deployment's key), a version that goes back, a build or delta other
	// than the one named, bytes longer than named.
	ErrUntrusted = errors.New("untrusted")

	// ErrExpired is wrapped when the newest valid statement has expired:
	// the origin is frozen, or its timestamp was not renewed. It wraps
	// ErrUntrusted.
	ErrExpired = fmt.Errorf("%w: expired", ErrUntrusted)

	// ErrMissing is what a Store or fetch answers for a name it lacks.
	ErrMissing = errors.New("missing")
)
