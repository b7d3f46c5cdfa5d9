// Package buildinfo says which build of pds is running: the module version
// and the VCS commit the Go toolchain recorded (debug.ReadBuildInfo).
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// Version returns the module version ("devel" for a build from a work tree
// without a tagged version), with the commit and "+dirty" when recorded:
// "devel (3a897ec1f2c4, modified)".
var Version = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	switch {
	case rev != "" && modified == "true":
		v += " (" + rev + ", modified)"
	case rev != "":
		v += " (" + rev + ")"
	}
	return v
})
