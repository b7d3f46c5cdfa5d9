package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/productdata/pds/internal/fixture"
	"github.com/productdata/pds/snapshots"
)

func TestSnapshotUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"snapshot"}, 2, "takes a subcommand"},
		{[]string{"snapshot", "-h"}, 0, "usage: pds snapshot pull"},
		{[]string{"snapshot", "pull", "-h"}, 0, "usage: pds snapshot pull ORIGIN"},
		{[]string{"snapshot", "pull", "file:///x"}, 2, "--into is required"},
		{[]string{"snapshot", "pull", "--into", "d", "--pubkey", "p"}, 2, "pull takes ORIGIN"},
		{[]string{"snapshot", "sign", "--key", "k"}, 2, "sign takes SNAPSHOT_DIR"},
		{[]string{"snapshot", "verify", "dir"}, 2, "--pubkey is required"},
		{[]string{"snapshot", "keygen", "--pub", "a"}, 2, "--key is required"},
		{[]string{"snapshot", "follow", "o", "--snapshots", "d", "--pubkey", "p", "--every", "0s"}, 2, "--every must be positive"},
		{[]string{"snapshot", "publish", "dir"}, 2, "publish takes SNAPSHOT_DIR ORIGIN"},
		{[]string{"snapshot", "publish", "--bogus", "a", "b"}, 2, "flag provided but not defined"},
		{[]string{"snapshot", "pull", "ftp://x", "--into", "d", "--pubkey", "/nonexistent"}, 1, "public key /nonexistent"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errOut := runCmd(c.args...)
			if code != c.code || !strings.Contains(out+errOut, c.want) {
				t.Fatalf("exit %d (want %d), output %q does not say %q", code, c.code, out+errOut, c.want)
			}
			if code == 2 && strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Errorf("a usage error should be one line, got %q", errOut)
			}
		})
	}
}

// mustRun runs a pds command and fails the test unless it exits 0.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runCmd(args...)
	if code != 0 {
		t.Fatalf("pds %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// buildSigned ingests the passport case with a sequence and signs it.
func buildSigned(t *testing.T, seq int, key string) string {
	t.Helper()
	in := fixture.WriteCase(t, fixture.CaseFile("passport"))
	out := filepath.Join(t.TempDir(), fmt.Sprintf("build%d", seq))
	mustRun(t, "ingest", "--in", in, "--out", out, "--quiet", "--sequence", fmt.Sprint(seq))
	if key != "" {
		mustRun(t, "snapshot", "sign", "--key", key, out)
	}
	return out
}

// TestSnapshotPublishPullServe: the commands end to end, as an operator runs
// them: keygen, sign, verify (pds and minisign), publish to a real S3
// server (versitygw), pull, serve the pulled build, refuse a tampered one.
func TestSnapshotPublishPullServe(t *testing.T) {
	dir := t.TempDir()
	pub, key := filepath.Join(dir, "pds.pub"), filepath.Join(dir, "pds.key")
	if out := mustRun(t, "snapshot", "keygen", "--pub", pub, "--key", key); !strings.Contains(out, "public key "+pub) {
		t.Errorf("keygen said %q", out)
	}
	if st, _ := os.Stat(key); st == nil || st.Mode().Perm() != 0o600 {
		t.Errorf("secret key mode %v", st)
	}
	b1 := buildSigned(t, 1, key)
	if out := mustRun(t, "snapshot", "verify", "--pubkey", pub, b1); !strings.Contains(out, "sequence 1") {
		t.Errorf("verify said %q", out)
	}
	minisign := fixture.Tool(t, "minisign", "PDS_MINISIGN")
	cmd := exec.Command(minisign, "-Vm", snapshots.ManifestName, "-p", pub)
	cmd.Dir = b1
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("minisign -Vm manifest.json: %v\n%s", err, out)
	}

	s3 := fixture.S3Server(t)
	origin := "s3://" + s3.Bucket + "/fleet"
	mustRun(t, "snapshot", "publish", "--endpoint", s3.Endpoint, "--pubkey", pub, b1, origin)
	snaps := filepath.Join(dir, "snapshots")
	out := mustRun(t, "snapshot", "pull", origin, "--endpoint", s3.Endpoint, "--into", snaps, "--pubkey", pub)
	if !strings.Contains(out, "is current in") {
		t.Errorf("pull said %q", out)
	}
	keysPath, secrets := fixture.Keys(t)
	base, _ := startServe(t, "--snapshot", filepath.Join(snaps, "current"), "--keys", keysPath)
	if code, body := getJSON(t, base+"/v1/products/gtin:09520123456788", secrets[fixture.KeyFull]); code != 200 || body["status"] != "found" {
		t.Fatalf("identity from the pulled build: %d %v", code, body)
	}

	// A tampered build: pds verify refuses it, and so does minisign.
	b2 := buildSigned(t, 2, key)
	m := filepath.Join(b2, snapshots.ManifestName)
	raw, _ := os.ReadFile(m)
	os.WriteFile(m, []byte(strings.Replace(string(raw), `"sequence": 2`, `"sequence": 3`, 1)), 0o644)
	code, _, errOut := runCmd("snapshot", "verify", "--pubkey", pub, b2)
	if code != 1 || !strings.Contains(errOut, "the signature does not match manifest.json") {
		t.Errorf("verify of a tampered manifest: exit %d, %q", code, errOut)
	}
	cmd = exec.Command(minisign, "-Vm", snapshots.ManifestName, "-p", pub)
	cmd.Dir = b2
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("minisign accepted a tampered manifest: %s", out)
	}
	code, _, errOut = runCmd("snapshot", "publish", "--endpoint", s3.Endpoint, "--pubkey", pub, b2, origin)
	if code != 1 || !strings.Contains(errOut, "signature does not match") {
		t.Errorf("publish of a tampered manifest: exit %d, %q", code, errOut)
	}
	code, _, errOut = runCmd("snapshot", "rollback", snaps)
	if code != 1 || !strings.Contains(errOut, "keeps no build older") {
		t.Errorf("rollback with one build: exit %d, %q", code, errOut)
	}
}

// TestMinisignKeyInterop: a key pair made by the minisign tool (unencrypted,
// -W) signs with pds, and pds's keys verify with minisign (above).
func TestMinisignKeyInterop(t *testing.T) {
	minisign := fixture.Tool(t, "minisign", "PDS_MINISIGN")
	dir := t.TempDir()
	pub, key := filepath.Join(dir, "m.pub"), filepath.Join(dir, "m.key")
	if out, err := exec.Command(minisign, "-G", "-W", "-p", pub, "-s", key).CombinedOutput(); err != nil {
		t.Fatalf("minisign -G: %v\n%s", err, out)
	}
	b := buildSigned(t, 1, key)
	mustRun(t, "snapshot", "verify", "--pubkey", pub, b)
	cmd := exec.Command(minisign, "-Vm", snapshots.ManifestName, "-p", pub)
	cmd.Dir = b
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("minisign -Vm: %v\n%s", err, out)
	}
}

// TestHelperProcess is not a test: the interrupted-pull test re-runs the
// test binary with PDS_HELPER_ARGS to run one pds command in a process it
// can kill.
func TestHelperProcess(t *testing.T) {
	args := os.Getenv("PDS_HELPER_ARGS")
	if args == "" {
		return
	}
	os.Exit(run(context.Background(), strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// TestPullKilledMidway: 'pds snapshot pull' is killed (SIGKILL) while a file
// is half downloaded; run again, it resumes that file and completes, and
// nothing was served from the half-pulled build meanwhile.
func TestPullKilledMidway(t *testing.T) {
	dir := t.TempDir()
	pub, key := filepath.Join(dir, "pds.pub"), filepath.Join(dir, "pds.key")
	mustRun(t, "snapshot", "keygen", "--pub", pub, "--key", key)
	b1 := buildSigned(t, 1, key)
	root := filepath.Join(dir, "origin")
	mustRun(t, "snapshot", "publish", b1, "file://"+root)
	m, err := snapshots.ReadManifest(b1)
	if err != nil {
		t.Fatal(err)
	}
	var big snapshots.File
	for _, f := range m.Files {
		if f.Size > big.Size {
			big = f
		}
	}
	bigPath := "/" + m.BuildID + "/" + big.Path
	// The server sends half of the largest file, then stalls until released.
	var mu sync.Mutex
	stall := true
	release := make(chan struct{})
	defer close(release)
	files := http.FileServer(http.Dir(root))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		s := stall && r.URL.Path == bigPath
		mu.Unlock()
		if !s {
			files.ServeHTTP(w, r)
			return
		}
		b, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(r.URL.Path)))
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.Write(b[:len(b)/2])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()

	snaps := filepath.Join(dir, "snapshots")
	args := []string{"snapshot", "pull", srv.URL + "/", "--into", snaps, "--pubkey", pub}
	child := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	child.Env = append(os.Environ(), "PDS_HELPER_ARGS="+strings.Join(args, "\x1f"))
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	partial := filepath.Join(snaps, ".staging-"+m.BuildID, filepath.FromSlash(big.Path))
	deadline := time.Now().Add(60 * time.Second)
	for {
		if st, err := os.Stat(partial); err == nil && st.Size() >= big.Size/2 {
			break
		}
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatalf("the child never got half of %s", big.Path)
		}
		time.Sleep(20 * time.Millisecond)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	if _, err := os.Lstat(filepath.Join(snaps, "current")); err == nil {
		t.Fatal("a half-pulled build became current")
	}
	mu.Lock()
	stall = false
	mu.Unlock()
	out := mustRun(t, args...)
	if !strings.Contains(out, "is current in") || strings.Contains(out, " 0 reused") {
		t.Errorf("second pull said %q; want the half file reused", out)
	}
	mustRun(t, "snapshot", "verify", "--pubkey", pub, filepath.Join(snaps, "current"))
	if _, err := os.Stat(filepath.Join(snaps, ".staging-"+m.BuildID)); err == nil {
		t.Error("the staging directory is still there")
	}
}

// TestServeRequiresSignature: with --pubkey, pds serve refuses an unsigned
// snapshot at start, and at a swap refuses an unsigned or otherwise signed
// one while it goes on serving the current one; a well signed one swaps in.
func TestServeRequiresSignature(t *testing.T) {
	dir := t.TempDir()
	pub, key := filepath.Join(dir, "pds.pub"), filepath.Join(dir, "pds.key")
	mustRun(t, "snapshot", "keygen", "--pub", pub, "--key", key)
	otherPub, otherKey := filepath.Join(dir, "other.pub"), filepath.Join(dir, "other.key")
	mustRun(t, "snapshot", "keygen", "--pub", otherPub, "--key", otherKey)
	signed, unsigned, other := buildSigned(t, 1, key), buildSigned(t, 2, ""), buildSigned(t, 3, otherKey)
	in := fixture.WriteCase(t, fixture.CaseFile("passport"))
	products := filepath.Join(in, "products.ndjson")
	raw, _ := os.ReadFile(products)
	os.WriteFile(products, []byte(strings.ReplaceAll(string(raw), "Demo Foods GmbH", "Swapped Foods GmbH")), 0o644)
	next := filepath.Join(dir, "next")
	mustRun(t, "ingest", "--in", in, "--out", next, "--quiet", "--sequence", "4")
	mustRun(t, "snapshot", "sign", "--key", key, next)

	keysPath, secrets := fixture.Keys(t)
	code, _, errOut := runCmd("serve", "--snapshot", unsigned, "--keys", keysPath, "--pubkey", pub, "--addr", "127.0.0.1:0")
	if code != 1 || !strings.Contains(errOut, "the snapshot is not signed") {
		t.Fatalf("serve of an unsigned snapshot: exit %d, %q", code, errOut)
	}

	current := filepath.Join(dir, "current")
	point := func(target string) {
		tmp := filepath.Join(dir, "current.tmp")
		os.Remove(tmp)
		os.Symlink(target, tmp)
		if err := os.Rename(tmp, current); err != nil {
			t.Fatal(err)
		}
	}
	point(signed)
	base, stderr := startServe(t, "--snapshot", current, "--keys", keysPath, "--pubkey", pub, "--watch", "50ms")
	maker := func() string {
		_, m := getJSON(t, base+"/v1/products/09520123456788", secrets[fixture.KeyFull])
		data, _ := m["data"].(map[string]any)
		return fmt.Sprint(data["manufacturer"])
	}
	for _, c := range []struct{ target, why string }{
		{unsigned, "the snapshot is not signed"},
		{other, "not by the trusted key"},
	} {
		point(c.target)
		seen := false
		for i := 0; i < 400 && !seen; i++ {
			seen = strings.Contains(stderr.String(), c.why)
			time.Sleep(25 * time.Millisecond)
		}
		if !seen {
			t.Fatalf("swap to %s: no refusal saying %q in the log:\n%s", c.target, c.why, stderr.String())
		}
		if got := maker(); got != "Demo Foods GmbH" {
			t.Fatalf("after a refused swap the served manufacturer is %q", got)
		}
	}
	point(next)
	swapped := false
	for i := 0; i < 400 && !swapped; i++ {
		swapped = maker() == "Swapped Foods GmbH"
		time.Sleep(25 * time.Millisecond)
	}
	if !swapped {
		t.Fatalf("a well signed snapshot was not swapped in:\n%s", stderr.String())
	}
}

// TestSnapshotFollow: the follow command takes each newly published build,
// refuses an older one, and logs its counters when stopped.
func TestSnapshotFollow(t *testing.T) {
	dir := t.TempDir()
	pub, key := filepath.Join(dir, "pds.pub"), filepath.Join(dir, "pds.key")
	mustRun(t, "snapshot", "keygen", "--pub", pub, "--key", key)
	b1, b2, b0 := buildSigned(t, 2, key), buildSigned(t, 3, key), buildSigned(t, 1, key)
	origin := "file://" + filepath.Join(dir, "origin")
	mustRun(t, "snapshot", "publish", b1, origin)
	snaps := filepath.Join(dir, "snapshots")

	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"snapshot", "follow", origin, "--snapshots", snaps, "--pubkey", pub, "--every", "50ms"}, &syncBuffer{}, stderr)
	}()
	waitCurrent := func(build string) {
		t.Helper()
		m, err := snapshots.ReadManifest(build)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 400; i++ {
			if target, err := os.Readlink(filepath.Join(snaps, "current")); err == nil && target == m.BuildID {
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
		t.Fatalf("current never became %s:\n%s", m.BuildID, stderr.String())
	}
	waitCurrent(b1)
	mustRun(t, "snapshot", "publish", b2, origin)
	waitCurrent(b2)
	mustRun(t, "snapshot", "publish", "--allow-downgrade", b0, origin)
	for i := 0; i < 400 && !strings.Contains(stderr.String(), "is not newer than the served build"); i++ {
		time.Sleep(25 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("follow exited %d: %s", code, stderr.String())
	}
	waitCurrent(b2)
	log := stderr.String()
	for _, want := range []string{`"msg":"new build is current"`, `"msg":"build refused; still serving the current one"`,
		"is not newer than the served build", `"msg":"follower stopped"`, `"swaps":2`, `"refused":1`} {
		if !strings.Contains(log, want) {
			t.Errorf("the follower's log lacks %s:\n%s", want, log)
		}
	}
}
