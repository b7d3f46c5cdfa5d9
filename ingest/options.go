package ingest

import (
	"io"
	"time"
)

// Options configure a build.
type Options struct {
	In, Out string
	// Strict makes the first rejected line fail the build.
	Strict bool
	// Rejects receives one line per rejected input line ("file:line: reason"),
	// and one per accepted line whose text had to be mended ("file:line:
	// member: invalid UTF-8 at byte N of the string (byte M of the line);
	// replaced with U+FFFD"); of each, the first maxRejectLines a file.
	// With Strict, such a line is a reject instead.
	Rejects io.Writer
	// Progress receives a progress line about once a second; nil for none.
	Progress io.Writer
	// ProgressEvery is the progress interval (default one second).
	ProgressEvery time.Duration
	// Now gives the build time (default time.Now).
	Now func() time.Time
	// Sequence is the manifest's build order (default: the build time in
	// Unix milliseconds); replicas refuse a lower one than they serve.
	Sequence int64
	// SourceDateEpoch, when set (pds ingest takes it from the environment
	// variable SOURCE_DATE_EPOCH, the reproducible-builds convention), is
	// the build's time: the manifest's created_at, the time part of its
	// build id, and the default sequence. The build id's random part is
	// then derived from the input digest and the sequence (buildID), so
	// that two builds of the same input make the same manifest too.
	SourceDateEpoch time.Time
	// DictionariesFrom, when set, is an earlier snapshot (of format 4)
	// whose compression dictionaries the build uses instead of making its
	// own: the views of every product that did not change are then the same
	// bytes as there, which is what keeps a small change small.
	DictionariesFrom string
	// KeepRecords keeps the build's records beside the snapshot, in
	// recordsDir(Out), for a later incremental build to take as its base.
	KeepRecords bool
	// Base, when set, makes the build incremental: In holds only the
	// products added or changed (each whole), the sources, parties and
	// documents added or changed, and deletions; every other product is
	// kept from the snapshot Base, which must have kept its records
	// (KeepRecords). The build keeps its own records.
	Base string
	// CheckBaseWhole makes an incremental build hash every file of Base's
	// store and of its kept records before it builds on them, so that
	// damage anywhere in them stops this build. Without it the build reads
	// and checks only what the night needs (the store chunk by chunk, the
	// records block by block, the search index whole, since it is copied),
	// and damage in the rest is carried forward under its old checksum, to
	// be found by a build with CheckBaseWhole, a pull, or a server's read.
	CheckBaseWhole bool
}
