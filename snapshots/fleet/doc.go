// Package fleet ships snapshots from the build host to every replica.
//
// A signed snapshot is published to an origin (an S3 bucket and prefix, a
// directory, or, for pulling only, an HTTP(S) server) as
//
//	PREFIX/<build_id>/...                 every file the manifest lists
//	PREFIX/<build_id>/manifest.json.minisig
//	PREFIX/<build_id>/manifest.json
//	PREFIX/latest                         the build id, written last
//
// A replica's snapshots directory holds whole builds under their ids, a
// current link to the one served, staging directories of pulls in progress,
// the list of builds rolled back from (refused) and a lock file. Pull brings
// the latest build in (Fetch: signature, order, free space and every
// checksum checked, resumable), opens it as pds serve does and reads it as
// serving does (SelfTest; a build that fails is deleted), flips current
// (Activate) and keeps the last few (Prune); Follower does that on a timer;
// Rollback moves current to another kept build that is not refused and
// passes the same self-test. Pull, Fetch, a follower's poll and Rollback
// hold the directory's lock (flock on Unix, LockFileEx on Windows) while
// they change it. See docs/deploy.md.
//
// A delta (deltas.go) takes a replica from a build it keeps to a new one
// without fetching what the two share; a bundle is a delta in a file, for a
// site that cannot reach the origin.
//
// The package owns origins, the snapshots directory (current, kept builds,
// staging, refused, the lock), deltas and bundles. It must not know what is
// inside a snapshot: it asks package snapshots for the layout's names, to
// check a manifest, a signature and every file, and to open a build for its
// self-test, and it never reads the store or the index itself. Nothing in
// package snapshots knows the fleet.
package fleet
