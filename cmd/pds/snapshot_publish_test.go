package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
)

// TestPublishDeltasFromLinkedBuilds: publish --deltas-from a folder whose
// builds are symbolic links makes the deltas from them; a link to nowhere
// is named on stderr, and a folder with no earlier build says that no
// delta is made.
func TestPublishDeltasFromLinkedBuilds(t *testing.T) {
	dir := t.TempDir()
	pub, key := filepath.Join(dir, "pds.pub"), filepath.Join(dir, "pds.key")
	mustRun(t, "snapshot", "keygen", "--pub", pub, "--key", key)
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
	real := filepath.Join(dir, "store-of-builds")
	for seq := 1; seq <= 2; seq++ {
		out := filepath.Join(real, fmt.Sprintf("b%d", seq))
		mustRun(t, "ingest", "--in", in, "--out", out, "--quiet", "--sequence", fmt.Sprint(seq))
		mustRun(t, "snapshot", "sign", "--key", key, out)
	}
	links := filepath.Join(dir, "nightly")
	if err := os.Mkdir(links, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, to := range map[string]string{"b1": filepath.Join(real, "b1"), "b0": filepath.Join(real, "removed")} {
		if err := os.Symlink(to, filepath.Join(links, name)); err != nil {
			t.Fatal(err)
		}
	}
	origin := "file://" + filepath.Join(dir, "origin")
	code, out, errOut := runCmd("snapshot", "publish", "--deltas-from", links, filepath.Join(real, "b1"), origin)
	if code != 0 || !strings.Contains(errOut, "holds no usable build older than build "+buildIDOf(t, filepath.Join(real, "b1"))) {
		t.Errorf("publish of the first build: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCmd("snapshot", "publish", "--deltas-from", links, filepath.Join(real, "b2"), origin)
	if code != 0 || !strings.Contains(out, "and 1 deltas from earlier builds") {
		t.Errorf("publish with deltas from linked builds: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "no delta from it: "+filepath.Join(links, "b0")) {
		t.Errorf("the link to nowhere was not named:\n%s", errOut)
	}
}
