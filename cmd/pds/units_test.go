package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
)

// unitBinary is where the units in deploy/ expect pds.
const unitBinary = "/usr/local/bin/pds"

// maxExposure is the highest overall exposure 'systemd-analyze security'
// may give a unit in deploy/ (0 is best, 10 worst; both score 1.2 today).
const maxExposure = "2.0"

// TestSystemdUnits checks the systemd units of deploy/ that docs/deploy.md
// installs: systemd-analyze verify accepts both (with unitBinary pointed at
// this test's binary, the only change, since pds is not installed here);
// their sandboxing keeps systemd-analyze security's overall exposure at
// maxExposure or below; and every flag an ExecStart passes is one that its
// pds command takes.
func TestSystemdUnits(t *testing.T) {
	analyze := systemdAnalyze(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	units := []string{"pds.service", "pds-follow.service"}
	var paths []string
	for _, u := range units {
		b, err := os.ReadFile(filepath.Join(ingesttest.Root(), "deploy", u))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if !strings.Contains(text, "ExecStart="+unitBinary+" ") {
			t.Fatalf("%s: ExecStart does not run %s", u, unitBinary)
		}
		checkExecFlags(t, u, text)
		p := filepath.Join(dir, u)
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(text, unitBinary, self)), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if out, err := exec.Command(analyze, append([]string{"verify", "--man=no"}, paths...)...).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	for _, p := range paths {
		out, err := exec.Command(analyze, "security", "--offline=yes", "--threshold="+strings.ReplaceAll(maxExposure, ".", ""), p).CombinedOutput()
		if err != nil {
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			t.Errorf("systemd-analyze security %s: %v (exposure above %s?): %s", filepath.Base(p), err, maxExposure, lines[len(lines)-1])
		}
	}
}

// checkExecFlags fails the test for a flag in unit's ExecStart that its pds
// command (the words before the first argument) does not list in its help.
func checkExecFlags(t *testing.T, unit, text string) {
	t.Helper()
	var words []string
	for _, line := range strings.Split(strings.ReplaceAll(text, "\\\n", " "), "\n") {
		if rest, ok := strings.CutPrefix(line, "ExecStart="); ok {
			words = strings.Fields(rest)[1:]
		}
	}
	var command []string
	for _, w := range words {
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "$") {
			break
		}
		command = append(command, w)
	}
	code, _, help := runCmd(append(command, "-h")...)
	if code != 0 || len(command) == 0 {
		t.Fatalf("%s: pds %s -h: exit %d\n%s", unit, strings.Join(command, " "), code, help)
	}
	for _, w := range words {
		name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if strings.HasPrefix(w, "-") && !strings.Contains(help, "\n  -"+name+" ") && !strings.Contains(help, "\n  -"+name+"\n") {
			t.Errorf("%s: pds %s takes no flag %s", unit, strings.Join(command, " "), w)
		}
	}
}

// systemdAnalyze returns the path of systemd-analyze, installing Debian's
// systemd (scripts/tools.sh) when it is missing; it fails, saying why, when
// it cannot.
func systemdAnalyze(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("systemd-analyze"); err == nil {
		return p
	}
	out, err := exec.Command("bash", filepath.Join(ingesttest.Root(), "scripts", "tools.sh"), "--only", "systemd-analyze").CombinedOutput()
	if p, lerr := exec.LookPath("systemd-analyze"); lerr == nil {
		return p
	}
	t.Fatalf("systemd-analyze is missing and scripts/tools.sh could not install it (Debian's systemd): %v\n%s", err, out)
	return ""
}
