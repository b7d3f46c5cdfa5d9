package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/productdata/pds/ingest/ingesttest"
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
		{[]string{"snapshot", "verify", "dir"}, 2, "give --trust-root (a root of trust) or --pubkey (a minisign key)"},
		{[]string{"snapshot", "keygen", "--pub", "a"}, 2, "--key is required"},
		{[]string{"snapshot", "follow", "o", "--snapshots", "d", "--pubkey", "p", "--every", "0s"}, 2, "--every must be positive"},
		{[]string{"snapshot", "publish", "dir"}, 2, "publish takes SNAPSHOT_DIR ORIGIN"},
		{[]string{"snapshot", "publish", "--bogus", "a", "b"}, 2, "flag provided but not defined"},
		{[]string{"snapshot", "pull", "ftp://x", "--into", "d", "--pubkey", "/nonexistent"}, 1, "public key /nonexistent"},
		{[]string{"snapshot", "pull", "file:///x", "--into", "d"}, 2, "give --trust-root (a root of trust) or --pubkey (a minisign key)"},
		{[]string{"snapshot", "pull", "file:///x", "--into", "d", "--trust-root", "/nonexistent"}, 1, "trust root: open /nonexistent"},
		{[]string{"snapshot", "publish", "--timestamp-key", "t", "a", "b"}, 2, "--timestamp-key needs --key"},
		{[]string{"snapshot", "bundle", "--from", "a", "--to", "b", "--out", "c", "--key", "k"}, 1, "secret key"},
		{[]string{"snapshot", "timestamp", "o"}, 2, "--key is required"},
		{[]string{"trust"}, 2, "pds trust takes a subcommand"},
		{[]string{"trust", "-h"}, 0, "usage: pds trust root"},
		{[]string{"trust", "keygen", "--key", "k"}, 2, "--pub is required"},
		{[]string{"trust", "root", "--deployment", "d", "--threshold", "2", "--out", "o"}, 2, "a root names at least one root key"},
		{[]string{"trust", "sign", "--key", "k"}, 2, "sign takes ROOT_FILE"},
		{[]string{"trust", "publish-root", "r"}, 2, "publish-root takes ROOT_FILE ORIGIN"},
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
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
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
	minisign := ingesttest.Tool(t, "minisign", "PDS_MINISIGN")
	cmd := exec.Command(minisign, "-Vm", snapshots.ManifestName, "-p", pub)
	cmd.Dir = b1
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("minisign -Vm manifest.json: %v\n%s", err, out)
	}

	s3 := ingesttest.S3Server(t)
	origin := "s3://" + s3.Bucket + "/fleet"
	mustRun(t, "snapshot", "publish", "--endpoint", s3.Endpoint, "--pubkey", pub, b1, origin)
	snaps := filepath.Join(dir, "snapshots")
	out := mustRun(t, "snapshot", "pull", origin, "--endpoint", s3.Endpoint, "--into", snaps, "--pubkey", pub)
	if !strings.Contains(out, "is current in") {
		t.Errorf("pull said %q", out)
	}
	keysPath, secrets := ingesttest.Keys(t)
	base, _ := startServe(t, "--snapshot", filepath.Join(snaps, "current"), "--keys", keysPath)
	if code, body := getJSON(t, base+"/v1/products/gtin:09520123456788", secrets[ingesttest.KeyFull]); code != 200 || body["status"] != "found" {
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
	minisign := ingesttest.Tool(t, "minisign", "PDS_MINISIGN")
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
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
	products := filepath.Join(in, "products.ndjson")
	raw, _ := os.ReadFile(products)
	os.WriteFile(products, []byte(strings.ReplaceAll(string(raw), "Demo Foods GmbH", "Swapped Foods GmbH")), 0o644)
	next := filepath.Join(dir, "next")
	mustRun(t, "ingest", "--in", in, "--out", next, "--quiet", "--sequence", "4")
	mustRun(t, "snapshot", "sign", "--key", key, next)

	keysPath, secrets := ingesttest.Keys(t)
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
		_, m := getJSON(t, base+"/v1/products/09520123456788", secrets[ingesttest.KeyFull])
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

// buildFailingSelfTest ingests a build whose signature and checksums hold
// but whose point index is cut short before the manifest is written and
// signed, as a faulty build host would ship it: pds serve refuses to open
// it ("point index: corrupt").
func buildFailingSelfTest(t *testing.T, seq int, key string) string {
	t.Helper()
	dir := buildSigned(t, seq, "")
	m, err := snapshots.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, filepath.FromSlash(snapshots.PointsPath)), 10); err != nil {
		t.Fatal(err)
	}
	if err := snapshots.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "snapshot", "sign", "--key", key, dir)
	return dir
}

func buildIDOf(t *testing.T, dir string) string {
	t.Helper()
	m, err := snapshots.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m.BuildID
}

// TestRollbackAfterAFailedSelfTestServes: build 1 is pulled; build 2 fails
// its self-test and is removed; build 3 is pulled; with build 2 put back
// on disk (as an older pds left it), 'snapshot rollback' with no id passes
// over it, saying why, and goes to build 1; the refused list names only
// the build rolled back from, and pds serve starts on the result.
func TestRollbackAfterAFailedSelfTestServes(t *testing.T) {
	dir := t.TempDir()
	pub, key := filepath.Join(dir, "pds.pub"), filepath.Join(dir, "pds.key")
	mustRun(t, "snapshot", "keygen", "--pub", pub, "--key", key)
	b1, bad, b3 := buildSigned(t, 1, key), buildFailingSelfTest(t, 2, key), buildSigned(t, 3, key)
	id1, idBad, id3 := buildIDOf(t, b1), buildIDOf(t, bad), buildIDOf(t, b3)
	origin := "file://" + filepath.Join(dir, "origin")
	snaps := filepath.Join(dir, "snapshots")
	pull := []string{"snapshot", "pull", origin, "--into", snaps, "--pubkey", pub}

	mustRun(t, "snapshot", "publish", b1, origin)
	mustRun(t, pull...)
	mustRun(t, "snapshot", "publish", bad, origin)
	code, _, errOut := runCmd(pull...)
	if code != 1 || !strings.Contains(errOut, "point index") || !strings.Contains(errOut, "the build was removed") {
		t.Fatalf("pull of a build that fails its self-test: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(snaps, idBad)); err == nil {
		t.Fatal("the build that failed its self-test is still on disk")
	}
	mustRun(t, "snapshot", "publish", b3, origin)
	mustRun(t, pull...)

	if err := os.CopyFS(filepath.Join(snaps, idBad), os.DirFS(bad)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd("snapshot", "rollback", "--pubkey", pub, snaps)
	if code != 0 || !strings.Contains(out, "current is now build "+id1) || !strings.Contains(errOut, "skipped build "+idBad+": fails the self-test") {
		t.Fatalf("rollback: exit %d\n%s%s", code, out, errOut)
	}
	if refused, _ := os.ReadFile(filepath.Join(snaps, "refused")); string(refused) != id3+"\n" {
		t.Fatalf("refused holds %q, want only %s", refused, id3)
	}
	keysPath, secrets := ingesttest.Keys(t)
	base, _ := startServe(t, "--snapshot", filepath.Join(snaps, "current"), "--keys", keysPath, "--pubkey", pub)
	if code, body := getJSON(t, base+"/v1/products/gtin:09520123456788", secrets[ingesttest.KeyFull]); code != 200 || body["status"] != "found" {
		t.Fatalf("identity after the rollback: %d %v", code, body)
	}
}

// TestPullWithTheWrongKeyLeavesNoDirectory: a pull refused for its key
// leaves no --into directory behind.
func TestPullWithTheWrongKeyLeavesNoDirectory(t *testing.T) {
	dir := t.TempDir()
	pub, key := filepath.Join(dir, "pds.pub"), filepath.Join(dir, "pds.key")
	otherPub, otherKey := filepath.Join(dir, "other.pub"), filepath.Join(dir, "other.key")
	mustRun(t, "snapshot", "keygen", "--pub", pub, "--key", key)
	mustRun(t, "snapshot", "keygen", "--pub", otherPub, "--key", otherKey)
	origin := "file://" + filepath.Join(dir, "origin")
	mustRun(t, "snapshot", "publish", buildSigned(t, 1, otherKey), origin)
	snaps := filepath.Join(dir, "snapshots")
	code, _, errOut := runCmd("snapshot", "pull", origin, "--into", snaps, "--pubkey", pub)
	if code != 1 || !strings.Contains(errOut, "not by the trusted key") {
		t.Fatalf("pull with the wrong key: exit %d, %q", code, errOut)
	}
	if _, err := os.Lstat(snaps); err == nil {
		t.Fatal("a failed pull left the --into directory behind")
	}
}

// TestConcurrentPullProcesses: three 'pds snapshot pull' processes into one
// directory at once all succeed: one fetches the build while the others say
// they wait for the lock, naming it and its holder, and then find the build
// current. Meanwhile a pull and a rollback that will not wait
// (--lock-wait 0) fail with that message.
func TestConcurrentPullProcesses(t *testing.T) {
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
	// The origin holds back the largest file until released, so that the
	// pull fetching it holds the lock while the others come.
	release := make(chan struct{})
	files := http.FileServer(http.Dir(root))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/"+m.BuildID+"/"+big.Path {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()

	snaps := filepath.Join(dir, "snapshots")
	args := []string{"snapshot", "pull", srv.URL + "/", "--into", snaps, "--pubkey", pub}
	type child struct {
		cmd         *exec.Cmd
		out, errOut *syncBuffer
	}
	var children []child
	for range 3 {
		c := child{cmd: exec.Command(os.Args[0], "-test.run=^TestHelperProcess$"), out: &syncBuffer{}, errOut: &syncBuffer{}}
		c.cmd.Env = append(os.Environ(), "PDS_HELPER_ARGS="+strings.Join(args, "\x1f"))
		c.cmd.Stdout, c.cmd.Stderr = c.out, c.errOut
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.cmd.Process.Kill() })
		children = append(children, c)
	}
	lockFile := filepath.Join(snaps, ".lock")
	heldBy := func(s string) bool {
		for _, c := range children {
			if strings.Contains(s, fmt.Sprintf("held by pid %d (", c.cmd.Process.Pid)) {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		waiting := 0
		for _, c := range children {
			if s := c.errOut.String(); strings.Contains(s, "waiting up to 10m0s for "+lockFile+", held by") && heldBy(s) {
				waiting++
			}
		}
		if waiting == 2 {
			break
		}
		if time.Now().After(deadline) {
			for _, c := range children {
				t.Logf("child %d: %s%s", c.cmd.Process.Pid, c.out.String(), c.errOut.String())
			}
			t.Fatalf("%d of 3 pulls say they wait for the lock, want 2", waiting)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, cmd := range [][]string{append(args, "--lock-wait", "0"), {"snapshot", "rollback", "--lock-wait", "0", snaps}} {
		code, _, errOut := runCmd(cmd...)
		if code != 1 || !strings.Contains(errOut, "snapshots directory is locked: "+lockFile+" is held by pid") || !heldBy(errOut) {
			t.Errorf("pds %s while the directory is locked: exit %d, %q", strings.Join(cmd, " "), code, errOut)
		}
	}
	close(release)
	fetched, current := 0, 0
	for _, c := range children {
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("a pull failed: %v\n%s%s", err, c.out.String(), c.errOut.String())
		}
		fetched += strings.Count(c.out.String(), "is current in")
		current += strings.Count(c.out.String(), "is already current in")
	}
	if fetched != 1 || current != 2 {
		t.Errorf("%d pulls fetched the build and %d found it current; want 1 and 2", fetched, current)
	}
	mustRun(t, "snapshot", "verify", "--pubkey", pub, filepath.Join(snaps, "current"))
}

// TestSnapshotDeltaCommands: publish --deltas-from stores a delta at a real
// S3 server (versitygw), pull takes it and says so, --no-delta does not;
// bundle and apply carry a build to a site without the origin, and apply
// refuses a bundle checked with another key.
func TestSnapshotDeltaCommands(t *testing.T) {
	dir := t.TempDir()
	pub, key := filepath.Join(dir, "pds.pub"), filepath.Join(dir, "pds.key")
	mustRun(t, "snapshot", "keygen", "--pub", pub, "--key", key)
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
	builds := filepath.Join(dir, "builds")
	if err := os.Mkdir(builds, 0o755); err != nil {
		t.Fatal(err)
	}
	for seq := 1; seq <= 2; seq++ {
		out := filepath.Join(builds, fmt.Sprintf("b%d", seq))
		mustRun(t, "ingest", "--in", in, "--out", out, "--quiet", "--sequence", fmt.Sprint(seq))
		mustRun(t, "snapshot", "sign", "--key", key, out)
	}
	b1, b2 := filepath.Join(builds, "b1"), filepath.Join(builds, "b2")

	s3 := ingesttest.S3Server(t)
	origin := "s3://" + s3.Bucket + "/nightly"
	mustRun(t, "snapshot", "publish", "--endpoint", s3.Endpoint, b1, origin)
	byDelta, whole, site := filepath.Join(dir, "by-delta"), filepath.Join(dir, "whole"), filepath.Join(dir, "site")
	for _, snaps := range []string{byDelta, whole, site} {
		mustRun(t, "snapshot", "pull", origin, "--endpoint", s3.Endpoint, "--into", snaps, "--pubkey", pub)
	}
	keysPath, _ := ingesttest.Keys(t)
	_, serveLog := startServe(t, "--admin-addr", "127.0.0.1:0", "--snapshot", filepath.Join(byDelta, "current"), "--keys", keysPath,
		"--pubkey", pub, "--watch", "20ms")
	admin := "http://" + regexp.MustCompile(`"admin_addr":"([^"]+)"`).FindStringSubmatch(serveLog.String())[1]
	out := mustRun(t, "snapshot", "publish", "--endpoint", s3.Endpoint, "--deltas-from", builds, b2, origin)
	if !strings.Contains(out, "and 1 deltas from earlier builds") {
		t.Errorf("publish said %q", out)
	}
	out = mustRun(t, "snapshot", "pull", origin, "--endpoint", s3.Endpoint, "--into", byDelta, "--pubkey", pub)
	if !strings.Contains(out, "by delta from build "+buildIDOf(t, b1)) || !strings.Contains(out, "in 5 objects") {
		t.Errorf("pull said %q, want a delta from b1 in 5 objects", out)
	}
	// The server swaps to it and counts how it came.
	bytes := regexp.MustCompile(`, (\d+) bytes pulled`).FindStringSubmatch(out)[1]
	want := []string{`pds_snapshot_updates_total{via="delta"} 1`, `pds_snapshot_update_bytes_total{via="delta"} ` + bytes}
	var metrics string
	for i := 0; i < 400; i++ {
		res, err := http.Get(admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if metrics = string(b); strings.Contains(metrics, want[0]) && strings.Contains(serveLog.String(), `"msg":"snapshot swapped"`) {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	for _, w := range want {
		if !strings.Contains(metrics, w) {
			t.Errorf("/metrics lacks %s", w)
		}
	}
	if !strings.Contains(serveLog.String(), `"via":"delta","bytes_fetched":`+bytes) {
		t.Errorf("the swap's log line does not say how the build came:\n%s", serveLog.String())
	}
	// Making the new build from the served one left the served one alone:
	// the server never saw a file of it change.
	if strings.Contains(serveLog.String(), "snapshot damaged") {
		t.Errorf("the served build was touched while the delta was applied:\n%s", serveLog.String())
	}
	out = mustRun(t, "snapshot", "pull", origin, "--endpoint", s3.Endpoint, "--into", whole, "--pubkey", pub, "--no-delta")
	if !strings.Contains(out, ": whole,") {
		t.Errorf("pull --no-delta said %q", out)
	}

	bundle := filepath.Join(dir, "b1-to-b2.pdsbundle")
	if out := mustRun(t, "snapshot", "bundle", "--from", b1, "--to", b2, "--out", bundle); !strings.Contains(out, "wrote "+bundle) {
		t.Errorf("bundle said %q", out)
	}
	otherPub := filepath.Join(dir, "other.pub")
	mustRun(t, "snapshot", "keygen", "--pub", otherPub, "--key", filepath.Join(dir, "other.key"))
	code, _, errOut := runCmd("snapshot", "apply", bundle, "--into", site, "--pubkey", otherPub)
	if code != 1 || !strings.Contains(errOut, "signed by key") {
		t.Errorf("apply checked with another key: exit %d, %q", code, errOut)
	}
	out = mustRun(t, "snapshot", "apply", bundle, "--into", site, "--pubkey", pub)
	if !strings.Contains(out, "is current in "+site+": by delta from build "+buildIDOf(t, b1)) {
		t.Errorf("apply said %q", out)
	}
	code, _, errOut = runCmd("snapshot", "bundle", "--from", b1, "--to", b2)
	if code != 2 || !strings.Contains(errOut, "--out is required") {
		t.Errorf("bundle without --out: exit %d, %q", code, errOut)
	}
}
