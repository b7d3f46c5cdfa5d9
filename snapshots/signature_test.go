package snapshots_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/snapshots"
)

func TestSignature(t *testing.T) {
	keys := t.TempDir()
	pub, err := snapshots.GenerateKey(filepath.Join(keys, "a.pub"), filepath.Join(keys, "a.key"))
	if err != nil {
		t.Fatal(err)
	}
	sec, err := snapshots.ReadPrivateKey(filepath.Join(keys, "a.key"), "")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := snapshots.GenerateKey(filepath.Join(keys, "b.pub"), filepath.Join(keys, "b.key"))
	otherSec, _ := snapshots.ReadPrivateKey(filepath.Join(keys, "b.key"), "")
	if _, err := snapshots.GenerateKey(filepath.Join(keys, "a.pub"), filepath.Join(keys, "c.key")); err == nil {
		t.Error("GenerateKey overwrote a key file")
	}

	newSnap := func(t *testing.T) string {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "data"), []byte("payload"), 0o644)
		if err := snapshots.WriteManifest(dir, snapshots.Manifest{BuildID: "B1", Sequence: 7}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	cases := []struct {
		name   string
		change func(dir string)
		key    *snapshots.PublicKey
		want   string
	}{
		{"good", func(string) {}, pub, ""},
		{"unsigned", func(dir string) { os.Remove(filepath.Join(dir, snapshots.SignatureName)) }, pub, "the snapshot is not signed"},
		{"other key", func(dir string) { snapshots.Sign(dir, otherSec) }, pub, "not by the trusted key"},
		{"checked with the other key", func(string) {}, other, "not by the trusted key"},
		{"manifest changed", func(dir string) {
			p := filepath.Join(dir, snapshots.ManifestName)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"sequence": 7`, `"sequence": 8`, 1)), 0o644)
		}, pub, "the signature does not match manifest.json"},
		{"garbage signature", func(dir string) {
			os.WriteFile(filepath.Join(dir, snapshots.SignatureName), []byte("not a signature\n"), 0o644)
		}, pub, "is not a minisign signature"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := newSnap(t)
			if err := snapshots.Sign(dir, sec); err != nil {
				t.Fatal(err)
			}
			c.change(dir)
			_, err := snapshots.VerifySigned(dir, c.key)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "invalid snapshot") {
				t.Errorf("%v does not wrap ErrInvalid", err)
			}
		})
	}
	// A data file changed after signing: the signature holds, the checksum does not.
	dir := newSnap(t)
	snapshots.Sign(dir, sec)
	os.WriteFile(filepath.Join(dir, "data"), []byte("PAYLOAD"), 0o644)
	if _, err := snapshots.VerifySigned(dir, pub); err == nil || !strings.Contains(err.Error(), "does not match its checksum") {
		t.Fatalf("changed file: %v", err)
	}
}

// TestSignatureFileModes writes a key pair and a signature under umask 077:
// the public key and the signature are still 0644 (a server running as
// another user reads them), the secret key 0600.
func TestSignatureFileModes(t *testing.T) {
	ingesttest.Umask(t, 0o077)
	keys, dir := t.TempDir(), t.TempDir()
	pubPath, secPath := filepath.Join(keys, "a.pub"), filepath.Join(keys, "a.key")
	if _, err := snapshots.GenerateKey(pubPath, secPath); err != nil {
		t.Fatal(err)
	}
	sec, err := snapshots.ReadPrivateKey(secPath, "")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "data"), []byte("payload"), 0o644)
	if err := snapshots.WriteManifest(dir, snapshots.Manifest{BuildID: "B1", Sequence: 1}); err != nil {
		t.Fatal(err)
	}
	if err := snapshots.Sign(dir, sec); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{pubPath: 0o644, secPath: 0o600, filepath.Join(dir, snapshots.SignatureName): 0o644} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %#o", filepath.Base(path), st.Mode().Perm(), err, want)
		}
	}
}
