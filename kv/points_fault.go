package kv

import (
	"fmt"

	"github.com/productdata/pds/domain"
)

// corrupt is the error of a read that found the index's bytes not as its
// header says: the file is damaged.
func corrupt() error {
	return domain.Internal(fmt.Errorf("%w: %w", domain.ErrDamaged, errPointsCorrupt))
}

// faulted turns a fault on the mapping (the file cut short under it),
// recovered, into an error; it is deferred by every read of a mapping.
func faulted(err *error) {
	if r := recover(); r != nil {
		*err = domain.Internal(fmt.Errorf("%w: point index: %v", domain.ErrDamaged, r))
	}
}
