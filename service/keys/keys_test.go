package keys

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/productdata/pds/internal/osfile"
)

// TestMain lets the test binary act as one 'pds keys add' process for
// TestParallelAddProcesses.
func TestMain(m *testing.M) {
	if path := os.Getenv("PDS_KEYS_TEST_ADD"); path != "" {
		secret, _, err := Add(path, New{Tenant: "p", Scopes: []string{ScopeRead}}, time.Now())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(secret)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestParallelAddProcesses runs 50 processes that each add a key to one
// file at the same time: every key they printed is in the file.
func TestParallelAddProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	const n = 50
	secrets := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "PDS_KEYS_TEST_ADD="+path)
			out, err := cmd.Output()
			if err != nil {
				errs <- fmt.Errorf("process %d: %v", i, err)
				return
			}
			secrets[i] = strings.TrimSpace(string(out))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkAll(t, path, secrets)
}

// TestParallelAddGoroutines is the same with 50 goroutines of one process
// (each takes its own lock on its own descriptor).
func TestParallelAddGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	const n = 50
	secrets := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, _, err := Add(path, New{Tenant: "g", Scopes: []string{ScopeRead}}, time.Now())
			if err != nil {
				t.Error(err)
			}
			secrets[i] = s
		}()
	}
	wg.Wait()
	checkAll(t, path, secrets)
}

func checkAll(t *testing.T, path string, secrets []string) {
	t.Helper()
	list, err := List(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(secrets) {
		t.Fatalf("the file holds %d keys, %d were added", len(list), len(secrets))
	}
	set, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range secrets {
		if _, ok := set.Lookup(s); !ok {
			t.Errorf("key %d (%.8s…) was printed but is not in the file", i, s)
		}
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != NewFileMode {
		t.Errorf("keys file mode %v, %v; want %v", st.Mode(), err, NewFileMode)
	}
}

// TestChangesKeepTheFilesModeOwnerAndGroup makes the keys file 0640 with
// another group, as for a server whose user is in that group: adding,
// rotating and revoking a key keep both, so the server can still read it.
func TestChangesKeepTheFilesModeOwnerAndGroup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	if _, _, err := Add(path, New{Tenant: "m", Scopes: []string{ScopeRead}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	gid := otherGroup(t)
	if err := os.Chown(path, os.Geteuid(), gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	var id string
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"add", func() error {
			_, k, err := Add(path, New{Tenant: "m", Scopes: []string{ScopeRead}}, time.Now())
			id = k.ID
			return err
		}},
		{"rotate", func() error { _, _, err := Rotate(path, id, time.Hour, time.Now()); return err }},
		{"revoke", func() error { _, err := Revoke(path, id, time.Now()); return err }},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		uid, g, _ := osfile.Owner(info)
		if info.Mode().Perm() != 0o640 || uid != os.Geteuid() || g != gid {
			t.Errorf("after %s: mode %v, owner %d, group %d; want 0640, %d, %d", step.name, info.Mode().Perm(), uid, g, os.Geteuid(), gid)
		}
	}
}

// otherGroup returns a group other than this process's own that it may give
// a file to: any group as root, else one of its supplementary groups.
func otherGroup(t *testing.T) int {
	if os.Geteuid() == 0 {
		return 65532
	}
	groups, err := os.Getgroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		if g != os.Getegid() {
			return g
		}
	}
	t.Skip("keeping a file's group needs root or a supplementary group to show it")
	return 0
}

func TestRevokeRotate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	n := New{Tenant: "acme", Scopes: []string{ScopeRead, ScopeResolve}, Quota: 100, QuotaPeriod: "day", Rate: 5, Burst: 5}
	s1, k, err := Add(path, n, t0)
	if err != nil {
		t.Fatal(err)
	}
	other, ko, _ := Add(path, New{Tenant: "other", Scopes: []string{ScopeRead}}, t0)

	// Rotate with a 10-minute grace: the new secret works at once, the old
	// one until the grace ends.
	s2, rk, err := Rotate(path, k.ID, 10*time.Minute, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if rk.ID != k.ID || rk.Tenant != k.Tenant || rk.Quota != k.Quota || rk.Rate != k.Rate || rk.Burst != k.Burst ||
		strings.Join(rk.Scopes, ",") != strings.Join(k.Scopes, ",") || s2 == s1 {
		t.Fatalf("rotated key %+v changed more than its secret (was %+v)", rk, k)
	}
	// Rotate again with no grace: the first secret keeps its grace, the
	// second is refused at once.
	s3, _, err := Rotate(path, k.ID, 0, t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	set, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		secret string
		at     time.Time
		want   bool
	}{
		{"newest secret", s3, t0.Add(3 * time.Minute), true},
		{"first secret within its grace", s1, t0.Add(10 * time.Minute), true},
		{"first secret when its grace ends", s1, t0.Add(11 * time.Minute), false},
		{"second secret rotated out without grace", s2, t0.Add(3 * time.Minute), false},
		{"another key is untouched", other, t0.Add(3 * time.Minute), true},
		{"not a key", "pds_nope", t0, false},
	}
	for _, s := range steps {
		got, ok := set.LookupAt(s.secret, s.at)
		if ok != s.want {
			t.Errorf("%s: accepted %v, want %v", s.name, ok, s.want)
		}
		if ok && s.secret != other && got.ID != k.ID {
			t.Errorf("%s: found %s, want %s", s.name, got.ID, k.ID)
		}
	}
	if set.Len() != 2 {
		t.Errorf("Len %d, want 2", set.Len())
	}

	// Revoke: every secret of the key is refused, the other key stays.
	if _, err := Revoke(path, k.ID, t0.Add(4*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := Revoke(path, k.ID, t0.Add(5*time.Minute)); err == nil || !strings.Contains(err.Error(), "already revoked") {
		t.Errorf("second revoke: %v", err)
	}
	if _, _, err := Rotate(path, k.ID, 0, t0.Add(5*time.Minute)); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("rotate of a revoked key: %v", err)
	}
	if _, err := Revoke(path, "key_nope", t0); !errors.Is(err, ErrNoKey) {
		t.Errorf("revoke of an unknown id: %v", err)
	}
	set, _ = Load(path)
	for _, s := range []string{s1, s3} {
		if _, ok := set.LookupAt(s, t0.Add(5*time.Minute)); ok {
			t.Error("a secret of a revoked key is accepted")
		}
	}
	if _, ok := set.LookupAt(other, t0); !ok || set.Len() != 1 {
		t.Errorf("the other key %s should stay (Len %d)", ko.ID, set.Len())
	}
	list, _ := List(path)
	if len(list) != 2 || list[0].RevokedAt == "" || list[0].Previous != nil {
		t.Errorf("list after revoke: %+v", list)
	}
	b, _ := os.ReadFile(path)
	for _, s := range []string{s1, s2, s3, other} {
		if strings.Contains(string(b), s) {
			t.Fatal("a secret is stored in the keys file")
		}
	}
}

// The watcher notices a keys file created, replaced, written in place and
// removed, and nothing else: with device, inode and change time (Linux,
// macOS) and with only size, mode and modification time (the stamp other
// platforms have).
func TestWatcher(t *testing.T) {
	for _, c := range []struct {
		name  string
		stamp func(os.FileInfo) osfile.Stamp
	}{
		{"this platform", osfile.StampOf},
		{"no inode or change time", func(os.FileInfo) osfile.Stamp { return osfile.Stamp{} }},
	} {
		t.Run(c.name, func(t *testing.T) { testWatcher(t, newWatcher(filepath.Join(t.TempDir(), "keys.json"), c.stamp)) })
	}
}

func testWatcher(t *testing.T, w *Watcher) {
	path := w.path
	if w.Changed() {
		t.Fatal("an absent file that stays absent changed")
	}
	_, k, err := Add(path, New{Tenant: "t", Scopes: []string{ScopeRead}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		change func()
		want   bool
	}{
		{"created", func() {}, true},
		{"nothing since", func() {}, false},
		{"revoked (file replaced)", func() { Revoke(path, k.ID, time.Now()) }, true},
		{"written in place, same size", func() {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, b, 0o600)
			os.Chtimes(path, time.Now(), time.Now().Add(time.Hour))
		}, true},
		{"mode changed", func() { os.Chmod(path, 0o640) }, true},
		{"removed", func() { os.Remove(path) }, true},
	}
	for _, s := range steps {
		s.change()
		if got := w.Changed(); got != s.want {
			t.Errorf("%s: Changed %v, want %v", s.name, got, s.want)
		}
	}

	// Run calls back after a change, and stops with its context.
	ctx, cancel := context.WithCancel(context.Background())
	called := make(chan struct{}, 10)
	done := make(chan struct{})
	go func() {
		w.Run(ctx, 5*time.Millisecond, func() { called <- struct{}{} })
		close(done)
	}()
	if _, _, err := Add(path, New{Tenant: "t", Scopes: []string{ScopeRead}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-called:
	case <-time.After(30 * time.Second):
		t.Fatal("no callback after the keys file changed")
	}
	cancel()
	<-done
}

// TestLockReleasedOnError checks that a failed change leaves the file as it
// was and the lock free for the next one.
func TestLockReleasedOnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	if _, _, err := Add(path, New{Tenant: "t", Scopes: []string{ScopeRead}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if _, err := Revoke(path, "key_nope", time.Now()); err == nil {
		t.Fatal("revoke of an unknown id succeeded")
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Fatal("a failed change rewrote the file")
	}
	if _, _, err := Add(path, New{Tenant: "t", Scopes: []string{ScopeRead}}, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// The server looks a secret up by its raw SHA-256: a hash written in the
// keys file in upper case is found, a hash that is not hex is loaded but
// matches nothing, and a presented secret longer than a pds key is hashed
// whole.
func TestLookupByDigest(t *testing.T) {
	long := "pds_" + strings.Repeat("x", 200)
	body := fmt.Sprintf(`{"keys":[
		{"id":"key_upper","sha256":%q,"tenant":"a","scopes":["products:read"],"created_at":"2026-01-01T00:00:00Z"},
		{"id":"key_long","sha256":%q,"tenant":"b","scopes":["products:read"],"created_at":"2026-01-01T00:00:00Z"},
		{"id":"key_nothex","sha256":%q,"tenant":"c","scopes":["products:read"],"created_at":"2026-01-01T00:00:00Z"}]}`,
		strings.ToUpper(Hash("pds_upper")), Hash(long), strings.Repeat("zz", 32))
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 3 {
		t.Errorf("Len = %d, want 3", s.Len())
	}
	for secret, want := range map[string]string{"pds_upper": "key_upper", long: "key_long", "pds_lower": "", "": "", long + "y": ""} {
		got := ""
		if k, ok := s.Lookup(secret); ok {
			got = k.ID
		}
		if got != want {
			t.Errorf("Lookup(%.12q) = %q, want %q", secret, got, want)
		}
	}
}
