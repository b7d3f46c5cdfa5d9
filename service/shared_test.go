package service_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/snapshots"
)

// Two services open one snapshot at once (as two processes of a blue/green
// restart do; kv tests the second process) and both answer.
func TestOneSnapshotOpenedTwice(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	for i := range 2 {
		svc, secrets := ingesttest.Service(t, snap)
		c, err := svc.Authenticate("Bearer " + secrets[ingesttest.KeyFull])
		if err != nil {
			t.Fatal(err)
		}
		id := "09520123456788"
		res, err := svc.Identity(context.Background(), c, service.ProductArgs{Identifier: &id})
		if err != nil || !strings.Contains(string(res.Body), `"found"`) {
			t.Fatalf("service %d: %v %s", i+1, err, res.Body)
		}
	}
}

// The manifest is not trusted beyond the snapshot: paths leaving it and
// files it does not list are refused before anything is opened.
func TestOpenSnapshotRefusesUntrustedFiles(t *testing.T) {
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
	cases := []struct {
		name   string
		damage func(dir string)
		want   string
	}{
		{"a listed path outside the snapshot", func(dir string) {
			p := filepath.Join(dir, snapshots.ManifestName)
			b, _ := os.ReadFile(p)
			var m map[string]any
			json.Unmarshal(b, &m)
			m["files"] = append(m["files"].([]any), map[string]any{"path": "../../../etc/hostname", "size": 1, "blake3": "blake3:" + strings.Repeat("0", 64)})
			b, _ = json.Marshal(m)
			os.WriteFile(p, b, 0o644)
		}, `lists "../../../etc/hostname"`},
		{"an unlisted table", func(dir string) {
			os.WriteFile(filepath.Join(dir, "store", "999999.sst"), []byte("x"), 0o644)
		}, "file store/999999.sst is not listed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap := ingesttest.Build(t, in)
			c.damage(snap)
			_, err := service.OpenSnapshot(snap, snapshots.OpenOptions{CacheBytes: 1 << 20})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}
