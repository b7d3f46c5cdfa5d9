package buildinfo

import (
	"runtime/debug"
	"sync"
)

// Set by the Makefile with -ldflags "-X github.com/productdata/pds/buildinfo.version=…";
// empty in a build without them.
var (
	version  string // a release tag, or "devel"
	commit   string // the full commit hash
	modified string // "true" when the work tree had changes
)

// Version returns the version ("devel" for a build from a work tree without
// a tagged version), with the commit and "modified" when known:
// "devel (3a897ec1f2c4, modified)".
var Version = sync.OnceValue(func() string {
	bi, _ := debug.ReadBuildInfo()
	return describe(stamp{version: version, commit: commit, modified: modified == "true"}, bi)
})

// stamp is what is known of a build.
type stamp struct {
	version, commit string
	modified        bool
}

// describe writes the version of a build: the linker's stamp where it has a
// commit, else what the toolchain recorded in bi (which may be nil).
func describe(ld stamp, bi *debug.BuildInfo) string {
	s := ld
	if s.commit == "" {
		s = recorded(bi)
		if ld.version != "" {
			s.version = ld.version
		}
	}
	if s.version == "" || s.version == "(devel)" {
		s.version = "devel"
	}
	rev := s.commit
	if len(rev) > 12 {
		rev = rev[:12]
	}
	switch {
	case rev != "" && s.modified:
		return s.version + " (" + rev + ", modified)"
	case rev != "":
		return s.version + " (" + rev + ")"
	}
	return s.version
}

// recorded is the stamp the Go toolchain put into the binary.
func recorded(bi *debug.BuildInfo) stamp {
	if bi == nil {
		return stamp{}
	}
	s := stamp{version: bi.Main.Version}
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			s.commit = kv.Value
		case "vcs.modified":
			s.modified = kv.Value == "true"
		}
	}
	return s
}
