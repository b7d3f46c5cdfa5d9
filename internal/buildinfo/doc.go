// Package buildinfo says which build of pds is running: its version and the
// VCS commit it was built from.
//
// `make build` sets both with the linker (-ldflags -X, see the Makefile), so
// a build says its commit even where the Go toolchain records none (a build
// with -buildvcs=false, or from a copy of the tree without its .git). A plain
// `go build` still works: the version and commit are then what the toolchain
// recorded (debug.ReadBuildInfo), "devel" with no commit when it recorded
// none.
//
// It owns the version and the commit only, and knows nothing of the packages
// that print them.
package buildinfo
