// Package trust is a replica's root of trust: who may sign builds, and for
// how long what they signed holds. It follows The Update Framework (TUF)
// and uses go-tuf's metadata package for the four roles' statements:
//
//   - root, signed by a threshold of offline keys, names the keys of the
//     other roles; a new root is signed by a threshold of the old root's
//     keys and of its own, so a replica walks from the root it was
//     provisioned with to the newest without being touched;
//   - targets names the build (the hash and length of its manifest, its
//     sequence and deployment) and the deltas to it from older builds;
//   - snapshot binds the targets version, so statements of different
//     nights never mix;
//   - timestamp, short-lived and renewed without a build, says the origin
//     is not frozen.
//
// The nightly key holds the targets and snapshot roles, and a timestamp
// key (often the same host's cron job) the timestamp role; neither can
// change who is trusted.
//
// go-tuf's updater is not used: it reads every target whole into memory,
// and a build is gigabytes. pds fetches and checks the build's files
// itself, streaming, against the manifest the targets statement vouches
// for; this package only walks and checks the statements
// (go-tuf's trustedmetadata does the specification's checks) and keeps
// them in the replica's snapshots folder (StateDir).
//
// Origin layout, under the origin's prefix: trust/N.root.json for every
// root version, trust/N.targets.json and trust/N.snapshot.json
// (consistent snapshots: a new night never overwrites what a reader may
// be reading), and trust/timestamp.json, written last.
package trust
