package main

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/service/keys"
)

func TestKeysListRevokeRotate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	code, out, errOut := runCmd("keys", "add", "--keys", path, "--tenant", "acme", "--scopes", "products:read,mcp", "--quota", "100", "--quota-period", "day", "--rate", "5")
	if code != 0 {
		t.Fatalf("add: %s", errOut)
	}
	secret := strings.TrimSpace(out)
	list, _ := keys.List(path)
	id := list[0].ID

	code, out, errOut = runCmd("keys", "list", "--keys", path)
	if code != 0 {
		t.Fatalf("list: %s", errOut)
	}
	for _, want := range []string{"ID", "TENANT", "SCOPES", "LIMITS", "CREATED", id, "acme", "products:read,mcp", "quota 100/day, rate 5/s burst 5", list[0].CreatedAt, "active"} {
		if !strings.Contains(out, want) {
			t.Errorf("list does not show %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, secret) || strings.Contains(out, list[0].Hash) || strings.Contains(out, list[0].Hash[:16]) {
		t.Fatalf("list shows the key or its hash:\n%s", out)
	}

	// Rotate, id before the flags: a new secret on stdout, the same id.
	code, out, errOut = runCmd("keys", "rotate", id, "--keys", path, "--grace", "1h")
	if code != 0 {
		t.Fatalf("rotate: %s", errOut)
	}
	next := strings.TrimSpace(out)
	if next == secret || !strings.HasPrefix(next, "pds_") || !strings.Contains(errOut, "old secret stays valid until") {
		t.Fatalf("rotate printed %q, %q", out, errOut)
	}
	set, _ := keys.Load(path)
	for _, s := range []string{secret, next} {
		if k, ok := set.Lookup(s); !ok || k.ID != id {
			t.Fatal("after rotate with grace, both secrets should name the key")
		}
	}
	_, out, _ = runCmd("keys", "list", "--keys", path)
	if !strings.Contains(out, "rotated") || !strings.Contains(out, "old secret valid until") {
		t.Errorf("list after rotate:\n%s", out)
	}

	code, _, errOut = runCmd("keys", "revoke", "--keys", path, id)
	if code != 0 {
		t.Fatalf("revoke: %s", errOut)
	}
	_, out, _ = runCmd("keys", "list", "--keys", path)
	if !strings.Contains(out, "revoked 20") {
		t.Errorf("list after revoke:\n%s", out)
	}
	if code, _, errOut = runCmd("keys", "revoke", "--keys", path, "key_nope"); code != 1 || !strings.Contains(errOut, "no such key") {
		t.Errorf("revoke of an unknown id: exit %d %q", code, errOut)
	}
}

// Revoke and rotate under a running server: after the server rereads the
// keys file, a revoked key is refused and a rotated key answers to its new
// secret (and to the old one during the grace period).
func TestKeysUnderServer(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	keysPath, secrets := ingesttest.Keys(t)
	base, stderr := startServe(t, "--snapshot", snap, "--keys", keysPath, "--watch", "0")
	ks, _ := keys.Load(keysPath)
	full, _ := ks.Lookup(secrets[ingesttest.KeyFull])
	acme, _ := ks.Lookup(secrets[ingesttest.KeyAcme])

	if code, _, errOut := runCmd("keys", "revoke", "--keys", keysPath, full.ID); code != 0 {
		t.Fatal(errOut)
	}
	code, out, errOut := runCmd("keys", "rotate", "--keys", keysPath, "--grace", "1h", acme.ID)
	if code != 0 {
		t.Fatal(errOut)
	}
	rotated := strings.TrimSpace(out)
	sighup(t)
	want := map[string]int{secrets[ingesttest.KeyFull]: 401, secrets[ingesttest.KeyAcme]: 200, rotated: 200}
	var got map[string]int
	for i := 0; i < 400; i++ {
		got = map[string]int{}
		for s := range want {
			got[s], _ = getJSON(t, base+"/v1/whoami", s)
		}
		// Wait for all three: the reload may fall between two of one
		// round's calls, which go in map order.
		if maps.Equal(got, want) {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	for s, st := range want {
		if got[s] != st {
			t.Errorf("key %.8s…: status %d, want %d (%s)", s, got[s], st, stderr.String())
		}
	}
	if _, m := getJSON(t, base+"/v1/whoami", rotated); m["data"].(map[string]any)["key_id"] != acme.ID {
		t.Errorf("the rotated key answers as %v, want %s", m["data"], acme.ID)
	}
}
