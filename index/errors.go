package index

import "errors"

// The errors of package index, all unexported: callers report them as they
// are, and only the package itself tests for one (errRebuild).
var (
	// errAddAfterClose is returned by Builder.Add once the builder is closed.
	errAddAfterClose = errors.New("index: Add after Close")

	// errTooManyDocs is returned by Builder.Add when the index holds
	// maxDocs docs already: positions would run out.
	errTooManyDocs = errors.New("index: too many docs")

	// errRelevanceNeedsManufacturer is returned by Index.Search for a
	// sort by relevance without a manufacturer to score against.
	errRelevanceNeedsManufacturer = errors.New("index: sort=relevance needs a manufacturer")

	// errCorrupt is returned when a doc record of the doc store cannot be
	// decoded.
	errCorrupt = errors.New("index: corrupt doc record")

	// errRebuild says the update cannot keep the base's order: the index is
	// built whole (Builder.Report says why).
	errRebuild = errors.New("index: update needs a whole build")

	// errNoSnapshotsBucket is returned when a Bolt root file holds no
	// snapshots bucket, so it is no index snapshot.
	errNoSnapshotsBucket = errors.New("no snapshots bucket")
)
