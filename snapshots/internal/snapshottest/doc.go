// Package snapshottest rewrites snapshots the way older versions of pds
// wrote them, for the tests of snapshots and snapshots/fleet. It knows the
// manifest's JSON only as the tests need it; it must not be imported by
// anything but tests, and it names no path of a snapshot itself (the caller
// passes the manifest's).
package snapshottest
