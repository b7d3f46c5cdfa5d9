// Package snapshots owns the snapshot format: the layout of a snapshot
// folder (layout.go), its manifest of every file's size and checksum
// (manifest.go), the chunk hashes of formats 3 and later (chunks.go), the
// minisign signature of the manifest (signature.go), and the two ends of a
// snapshot's life on one host: Writer, which builds one into a temporary
// folder and publishes it with one rename, and Open, which verifies one and
// serves reads from it, checking each chunk as it is first read and every
// file for a change at rest (the guard, guard.go).
//
// It is the only package that spells a path inside a snapshot; the others
// ask it (deps_test.go holds that). It must not know how snapshots travel
// between hosts: origins, pulls, deltas, rollbacks and the snapshots
// directory of a replica are package snapshots/fleet's, which uses this one
// and is never used by it. See docs/snapshots.md.
package snapshots
