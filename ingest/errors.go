package ingest

import (
	"errors"
)

// ErrStrict is returned when --strict meets a rejected line.
var ErrStrict = errors.New("strict build failed on a rejected line")
