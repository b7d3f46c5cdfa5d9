package service_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/snapshots"
)

// A damaged, truncated, incomplete or foreign snapshot is refused with a
// message that says what is wrong.
func TestOpenSnapshotRefuses(t *testing.T) {
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
	largest := func(dir string) string {
		m, err := snapshots.ReadManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		best := m.Files[0]
		for _, f := range m.Files {
			if f.Size > best.Size {
				best = f
			}
		}
		return filepath.Join(dir, best.Path)
	}
	cases := []struct {
		name   string
		damage func(dir string)
		want   string
	}{
		{"intact", func(string) {}, ""},
		{"byte changed", func(dir string) {
			p := largest(dir)
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0xff
			os.WriteFile(p, b, 0o644)
		}, "does not match its checksum"},
		{"truncated", func(dir string) {
			p := largest(dir)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-10], 0o644)
		}, "truncated or changed"},
		{"file missing", func(dir string) { os.Remove(largest(dir)) }, "is missing"},
		{"no manifest", func(dir string) { os.Remove(filepath.Join(dir, snapshots.ManifestName)) }, "no readable manifest.json"},
		{"foreign format", func(dir string) {
			p := filepath.Join(dir, snapshots.ManifestName)
			b, _ := os.ReadFile(p)
			var m map[string]any
			json.Unmarshal(b, &m)
			m["format_version"] = 99
			b, _ = json.Marshal(m)
			os.WriteFile(p, b, 0o644)
		}, "snapshot format 99"},
		{"not a snapshot", func(dir string) {
			os.RemoveAll(dir)
			os.MkdirAll(dir, 0o755)
		}, "no readable manifest.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := ingesttest.Build(t, in)
			c.damage(dir)
			// HashAll: a changed byte is found at opening only when every
			// file is hashed whole (else at its first read: see
			// TestDamageNeverServed).
			s, err := service.OpenSnapshot(dir, snapshots.OpenOptions{CacheBytes: 1 << 20, HashAll: true})
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
				return
			}
			if err == nil {
				s.Close()
				t.Fatal("damaged snapshot was opened")
			}
			if !errors.Is(err, snapshots.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want it to say %q", err, c.want)
			}
		})
	}
}

// TestAutoCacheBytes sizes the default block cache from the store's files
// only, within its bounds.
func TestAutoCacheBytes(t *testing.T) {
	files := func(sizes ...int64) snapshots.Manifest {
		var m snapshots.Manifest
		for i, n := range sizes {
			m.Files = append(m.Files, snapshots.File{Path: fmt.Sprintf("store/%06d.sst", i), Size: n})
		}
		m.Files = append(m.Files, snapshots.File{Path: "index/big.zap", Size: 5 << 30})
		return m
	}
	for _, c := range []struct {
		m    snapshots.Manifest
		want int64
	}{
		{files(), snapshots.MinAutoCache},
		{files(10 << 20), snapshots.MinAutoCache},
		{files(300<<20, 200<<20), 500 << 20},
		{files(3 << 30), snapshots.MaxAutoCache},
	} {
		if got := snapshots.AutoCacheBytes(c.m); got != c.want {
			t.Errorf("%v: %d, want %d", c.m.Files, got, c.want)
		}
	}
}
