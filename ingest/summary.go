package ingest

import (
	"time"
)

// Summary reports a finished build.
type Summary struct {
	Out         string
	BuildID     string
	InputDigest string
	Accepted    map[string]int64 // per input file (its logical name, e.g. claims.ndjson)
	Rejected    map[string]int64 // per input file
	// Files names, per logical input name, the file that was read
	// (claims.ndjson.gz for a gzip claims file).
	Files map[string]string
	// Unknown counts, per input file, the accepted lines that carried
	// members ingest does not read (they were ignored), with their names.
	Unknown map[string]UnknownMembers
	// Replaced counts, per input file, the accepted lines whose text was not
	// all Unicode (bytes that are not UTF-8, unpaired surrogate escapes):
	// those were replaced with U+FFFD, and each such line was warned of.
	Replaced map[string]int64
	// ByteOrderMark lists the input files that began with a UTF-8 byte order
	// mark, which was skipped.
	ByteOrderMark []string
	Ignored       []string // files in the input directory that are not input
	// RemovedStale lists the temporary folders of earlier, killed builds
	// that this build removed from beside Out.
	RemovedStale []string
	Views        int64
	Duration     time.Duration
	// Stages is how long each stage of the build took, in order: one per
	// input file read, then views, finishing, manifest and publish.
	Stages []StageTime
	// Incremental says what an incremental build did (nil for a full one).
	Incremental *Incremental
	// Records is where the build's records were kept ("" when they were not).
	Records string
}

// Incremental is the part of a Summary particular to an incremental build.
type Incremental struct {
	Base string
	// Changed and Added are the change set's products that replaced one of
	// the base's, and those that are new; Deleted the base's products
	// removed.
	Changed, Added, Deleted int64
	// Recomputed are kept products computed again because a source, party
	// or document they cite changed (all of them when a source was added or
	// its coverage changed); Kept those copied as they were.
	Recomputed, Kept int64
	// ChangedSources are the sources added or changed (a changed party
	// changes the sources it operates).
	ChangedSources []string
	// StoreLayers is how many layers of nights the new store holds on
	// the tables of the last build that wrote it whole (0: this build
	// wrote it whole, as it does every MaxStoreLayers+1 nights).
	StoreLayers int
	// SearchIndex says what the search index's update did: "updated: …"
	// when it kept the base's, "built whole: …" with the reason otherwise.
	SearchIndex string
}

// StageTime is how long one stage of a build took.
type StageTime struct {
	Name     string
	Duration time.Duration
}

// UnknownMembers is what a summary says about one file's unknown members.
type UnknownMembers struct {
	Lines int64    // lines with at least one unknown member
	Names []string // the first maxUnknownNames distinct member names, in order of appearance
}

// maxUnknownNames is how many distinct unknown member names a summary lists per file.
const maxUnknownNames = 10
