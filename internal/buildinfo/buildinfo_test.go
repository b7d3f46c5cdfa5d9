package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// The linker's stamp wins where it has a commit; without one the toolchain's
// record is used, and without either a build is "devel".
func TestDescribe(t *testing.T) {
	const hash = "3a897ec1f2c4d5e6f708192a3b4c5d6e7f809102"
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "false"}}}
	cases := []struct {
		name string
		ld   stamp
		bi   *debug.BuildInfo
		want string
	}{
		{"nothing known", stamp{}, nil, "devel"},
		{"no VCS stamp", stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		{"toolchain's stamp", stamp{}, vcs, "devel (0123456789ab)"},
		{"linker's stamp", stamp{version: "devel", commit: hash}, nil, "devel (3a897ec1f2c4)"},
		{"linker's stamp over the toolchain's", stamp{version: "v1.2.0", commit: hash, modified: true}, vcs, "v1.2.0 (3a897ec1f2c4, modified)"},
		{"a version without a commit", stamp{version: "v1.2.0"}, vcs, "v1.2.0 (0123456789ab)"},
		{"a module version", stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, "v0.3.1"},
	}
	for _, c := range cases {
		if got := describe(c.ld, c.bi); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// `make build` names the commit it built even when the toolchain records no
// VCS stamp (GOFLAGS=-buildvcs=false, as in a tree without .git); a plain
// go build of the same tree still works and says devel.
func TestMakeBuildStampsTheCommit(t *testing.T) {
	for _, tool := range []string{"make", "git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("this test runs %s, which is not on PATH: %v", tool, err)
		}
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD in %s (the test needs a git checkout): %v", root, err)
	}
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	made := filepath.Join(dir, "made")
	run("make", "-s", "build", "BIN="+made)
	want := regexp.MustCompile(`^pds devel \(` + string(head[:12]) + `(, modified)?\)\n`)
	if got := run(made, "version"); !want.MatchString(got) {
		t.Errorf("make build: pds version says %q, want %s", got, want)
	}
	plain := filepath.Join(dir, "plain")
	run("go", "build", "-o", plain, "./cmd/pds")
	if got := run(plain, "version"); !strings.HasPrefix(got, "pds devel\n") {
		t.Errorf("go build -buildvcs=false: pds version says %q, want pds devel", got)
	}
}
