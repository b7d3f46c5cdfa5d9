package ingest

import "errors"

// The errors of package ingest. A rejected line is no error (it is counted
// and reported, see rejects.go) unless the build is strict.
var (
	// ErrStrict is returned when --strict meets a rejected line.
	ErrStrict = errors.New("strict build failed on a rejected line")

	// errCorruptRecord is returned when a scratch record cannot be decoded.
	errCorruptRecord = errors.New("corrupt scratch record")
)
