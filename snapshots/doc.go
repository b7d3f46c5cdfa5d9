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
// current link to the one served, staging directories of pulls in progress
// and the list of builds rolled back from. Fetch brings the latest build in
// (signature, order, free space and every checksum checked, resumable),
// SelfTest opens it as pds serve does and reads it as serving does,
// Activate flips current, Prune keeps the last few, Rollback goes back;
// Follower does all of that on a timer. See docs/deploy.md.
package snapshots
