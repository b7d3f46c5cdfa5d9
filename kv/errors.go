package kv

import (
	"errors"

	"github.com/productdata/pds/domain"
)

// The errors of kv. Each is wrapped with what was being read (and, for a
// damaged store, with domain.ErrDamaged), so that errors.Is sees both; a
// missing key is not an error (ok = false).
var (
	// errCorrupt: a view or alias value does not decode.
	errCorrupt = errors.New("kv: corrupt view value")
	// errViewsCorrupt: a value of table TagViews, or the views'
	// dictionary entry or count of layers beside it, does not decode.
	errViewsCorrupt = errors.New("kv: corrupt passport and evidence value")
	// errPointsCorrupt: the point index's bytes are not as its header
	// says.
	errPointsCorrupt = errors.New("kv: point index: corrupt")
	// errNoPoints: an identity read from a store of layout 3 whose point
	// index was not opened (UsePoints, ReadPoints).
	errNoPoints = domain.Internal(errors.New("kv: the store keeps its identity views in its point index, which is not open"))
	// ErrReadAgain: what a PointsGuard's Unchanged answers when a file's
	// change time alone moved (a hard link to it made or removed, as a
	// night that builds on the snapshot makes): its bytes are checked again
	// as they are next read, and the reads since the last look must be made
	// again. Store.View does so; a batch's caller does on Reader.Check.
	ErrReadAgain = errors.New("kv: a point index file was linked or unlinked while it was read (its change time moved): read it again")
	// errReadOnly: what a served store's file system (servedFS) answers
	// to any write.
	errReadOnly = errors.New("kv: the store is opened read-only")
)
