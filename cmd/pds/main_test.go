package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/service/keys"
	"github.com/productdata/pds/snapshots"
)

// syncBuffer is a goroutine-safe buffer for a running command's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		err  string
	}{
		{nil, 2, "usage: pds"},
		{[]string{"nope"}, 2, "unknown command"},
		{[]string{"-h"}, 0, ""},
		{[]string{"ingest", "-h"}, 0, "usage: pds ingest"},
		{[]string{"ingest", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"ingest", "--in", "x"}, 2, "--out is required"},
		{[]string{"ingest", "--in", "x", "--out", "y", "--check-base-whole"}, 2, "--check-base-whole: it checks the base of an incremental build, and there is no --base"},
		{[]string{"serve", "-h"}, 0, "usage: pds serve"},
		{[]string{"serve", "--snapshot", "x"}, 2, "--keys is required"},
		{[]string{"serve", "--snapshot", "x", "--keys", "k", "--log-level", "loud"}, 2, "--log-level"},
		{[]string{"serve", "--snapshot", "x", "--keys", "k", "--max-conns-share", "0"}, 2, "--max-conns-share 0: want a share above 0 and at most 1"},
		{[]string{"serve", "--snapshot", "x", "--keys", "k", "--max-conns-share", "1.5"}, 2, "--max-conns-share 1.5"},
		{[]string{"serve", "--snapshot", "x", "--keys", "k", "--max-conns-share", "NaN"}, 2, "--max-conns-share NaN"},
		{[]string{"serve", "--snapshot", "x", "--keys", "k", "--search-copy-dir", "no-such-folder"}, 2, "--search-copy-dir: open no-such-folder"},
		{[]string{"keys"}, 2, "a keys subcommand is required"},
		{[]string{"keys", "nope"}, 2, "unknown keys subcommand"},
		{[]string{"keys", "revoke", "--keys", "k"}, 2, "the id of the key to revoke is required"},
		{[]string{"keys", "rotate", "--keys", "k", "key_a", "key_b"}, 2, "unexpected argument \"key_b\""},
		{[]string{"keys", "rotate", "--keys", "k", "--grace", "-1h", "key_a"}, 2, "--grace must not be negative"},
		{[]string{"keys", "-h"}, 0, "list    --keys FILE"},
		{[]string{"keys", "add", "--keys", "k", "--tenant", "t", "--scopes", "nope"}, 2, "unknown scope"},
		{[]string{"keys", "add", "-h"}, 0, "usage: pds keys add"},
		{[]string{"gen", "-h"}, 0, ""},
		{[]string{"gen", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"gen", "--format", "csv", "--products", "1", "--out", "x"}, 2, "--format"},
		{[]string{"gen", "--compress", "xz", "--products", "1", "--out", "x"}, 2, `--compress "xz" is not none, gzip or zstd`},
		{[]string{"gen", "--format", "off", "--compress", "zstd", "--products", "1", "--out", "x"}, 2, "--compress is for --format pds"},
		{[]string{"import"}, 2, "usage: pds import off"},
		{[]string{"import", "-h"}, 0, "usage: pds import off"},
		{[]string{"import", "csv"}, 2, "unknown format"},
		{[]string{"import", "off", "-h"}, 0, "usage: pds import off"},
		{[]string{"import", "off", "--in", "x"}, 2, "--out is required"},
		{[]string{"import", "off", "--in", "x", "--out", "y", "--retrieved-at", "today"}, 2, "--retrieved-at"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errOut := runCmd(c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errOut)
			}
			if !strings.Contains(errOut+out, c.err) {
				t.Errorf("output %q does not say %q", errOut+out, c.err)
			}
			if c.code == 2 && len(c.args) > 1 && strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Errorf("a usage error should be one line, got %q", errOut)
			}
		})
	}
}

func TestKeysAdd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	code, out, errOut := runCmd("keys", "add", "--keys", path, "--tenant", "acme", "--scopes", "products:read,mcp", "--quota", "100", "--quota-period", "day")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	key := strings.TrimSpace(out)
	if strings.Count(out, "\n") != 1 || !regexp.MustCompile(`^pds_[a-z2-7]{32}$`).MatchString(key) {
		t.Fatalf("stdout %q should be the key alone on one line", out)
	}
	b, _ := os.ReadFile(path)
	if bytes.Contains(b, []byte(key)) || bytes.Contains(b, []byte(key[4:])) {
		t.Fatal("the keys file holds the key itself")
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != keys.NewFileMode {
		t.Errorf("keys file mode %v, want %v", st.Mode().Perm(), keys.NewFileMode)
	}
	var f struct {
		Keys []map[string]any `json:"keys"`
	}
	json.Unmarshal(b, &f)
	if len(f.Keys) != 1 || f.Keys[0]["tenant"] != "acme" || f.Keys[0]["quota"] != float64(100) {
		t.Errorf("keys file %s", b)
	}
}

// startServe runs 'pds serve' in the background and returns its base URL.
func startServe(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), io.Discard, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("serve did not stop")
		}
	})
	re := regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)
	for i := 0; i < 200; i++ {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return "http://" + m[1], stderr
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		case <-time.After(25 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not start: %s", stderr.String())
	return "", nil
}

func getJSON(t *testing.T, url, key string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}

// Serving end to end: the real binary's serve command on a symlinked
// snapshot; changing the link swaps the snapshot; SIGHUP rereads the keys.
func TestServeSwapAndReload(t *testing.T) {
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
	a := ingesttest.Build(t, in)
	// b: the same input with another manufacturer for the demo product.
	in2 := t.TempDir()
	files, _ := os.ReadDir(in)
	for _, f := range files {
		raw, _ := os.ReadFile(filepath.Join(in, f.Name()))
		raw = bytes.ReplaceAll(raw, []byte("Demo Foods GmbH"), []byte("Swapped Foods GmbH"))
		os.WriteFile(filepath.Join(in2, f.Name()), raw, 0o644)
	}
	b := ingesttest.Build(t, in2)
	dir := t.TempDir()
	current := filepath.Join(dir, "current")
	if err := os.Symlink(a, current); err != nil {
		t.Fatal(err)
	}
	keysPath, secrets := ingesttest.Keys(t)
	base, stderr := startServe(t, "--snapshot", current, "--keys", keysPath, "--watch", "50ms")
	key := secrets[ingesttest.KeyFull]

	_, m := getJSON(t, base+"/v1/products/09520123456788", key)
	if fmt.Sprint(m["data"].(map[string]any)["manufacturer"]) != "Demo Foods GmbH" {
		t.Fatalf("before swap: %v", m)
	}
	tmp := filepath.Join(dir, "current.tmp")
	os.Symlink(b, tmp)
	if err := os.Rename(tmp, current); err != nil {
		t.Fatal(err)
	}
	swapped := false
	for i := 0; i < 200 && !swapped; i++ {
		_, m = getJSON(t, base+"/v1/products/09520123456788", key)
		swapped = fmt.Sprint(m["data"].(map[string]any)["manufacturer"]) == "Swapped Foods GmbH"
		time.Sleep(25 * time.Millisecond)
	}
	if !swapped {
		t.Fatalf("snapshot not swapped: %s", stderr.String())
	}

	// A new key works once the keys file changed: the watcher (--watch)
	// rereads it, and so does SIGHUP (TestServeKeysReloadOnSIGHUP checks that
	// alone, with the watcher off).
	code, out, _ := runCmd("keys", "add", "--keys", keysPath, "--tenant", "late", "--scopes", "products:read")
	if code != 0 {
		t.Fatal("keys add failed")
	}
	late := strings.TrimSpace(out)
	if !accepted(t, base, late) {
		t.Fatalf("new key refused after the keys file changed: %s", stderr.String())
	}
	// Log lines are buffered for up to 100 ms.
	logged := false
	for i := 0; i < 100 && !logged; i++ {
		logged = strings.Contains(stderr.String(), `"msg":"request","request_id":"req_`)
		time.Sleep(20 * time.Millisecond)
	}
	if !logged {
		t.Error("request log lines carry no request id")
	}
	if strings.Contains(stderr.String(), late) || strings.Contains(stderr.String(), key) {
		t.Fatal("a key was logged")
	}
}

func TestServeRefusesDamagedSnapshot(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	newer := snapshots.FormatVersion + 1
	os.WriteFile(filepath.Join(snap, "manifest.json"), []byte(fmt.Sprintf(`{"format_version":%d}`, newer)), 0o644)
	keysPath, _ := ingesttest.Keys(t)
	code, _, errOut := runCmd("serve", "--snapshot", snap, "--keys", keysPath, "--addr", "127.0.0.1:0")
	if code == 0 || !strings.Contains(errOut, "invalid snapshot") || !strings.Contains(errOut, fmt.Sprintf("format %d", newer)) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// With the watcher off (--watch 0) a key added to the keys file is refused
// until SIGHUP, and accepted after it.
func TestServeKeysReloadOnSIGHUP(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	keysPath, _ := ingesttest.Keys(t)
	base, stderr := startServe(t, "--snapshot", snap, "--keys", keysPath, "--watch", "0")
	code, out, _ := runCmd("keys", "add", "--keys", keysPath, "--tenant", "late", "--scopes", "products:read")
	if code != 0 {
		t.Fatal("keys add failed")
	}
	late := strings.TrimSpace(out)
	if st, _ := getJSON(t, base+"/v1/whoami", late); st != 401 {
		t.Fatalf("new key accepted before SIGHUP with --watch 0: %d", st)
	}
	sighup(t)
	if !accepted(t, base, late) {
		t.Fatalf("new key refused after SIGHUP: %s", stderr.String())
	}
}

// accepted reports whether key is accepted by whoami within 5 s.
func accepted(t *testing.T, base, key string) bool {
	for i := 0; i < 200; i++ {
		if st, _ := getJSON(t, base+"/v1/whoami", key); st == 200 {
			return true
		}
		time.Sleep(25 * time.Millisecond)
	}
	return false
}
