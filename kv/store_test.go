package kv_test

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
)

// TestMain lets the test binary act as a second pds process that holds a
// store open: it opens PDS_KV_TEST_HOLD, reads from it, says so on stdout
// and keeps it open until its stdin closes.
func TestMain(m *testing.M) {
	if dir := os.Getenv("PDS_KV_TEST_HOLD"); dir != "" {
		st, err := kv.Open(dir, 1<<20, nil, nil)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		v, ok, err := st.Meta(kv.MetaCursorKey)
		fmt.Printf("open %v %v %d\n", ok, err, len(v))
		io.Copy(io.Discard, os.Stdin)
		st.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestTwoProcessesServeOneSnapshot opens one snapshot's store in another
// process and, while that one holds it, twice more in this one: all answer.
func TestTwoProcessesServeOneSnapshot(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	m, err := snapshots.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(snap, "store")

	child := ingesttest.SelfCommand("-test.run=^$")
	child.Env = append(os.Environ(), "PDS_KV_TEST_HOLD="+store)
	stdin, _ := child.StdinPipe()
	stdout, _ := child.StdoutPipe()
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	defer stdin.Close()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if !strings.HasPrefix(line, "open true <nil>") {
		t.Fatalf("the other process could not open the store: %q", line)
	}

	var stores []*kv.Store
	for i := range 2 {
		st, err := kv.Open(store, 1<<20, m.FilesIn("store"), nil)
		if err != nil {
			t.Fatalf("open %d while another process holds the store: %v", i+1, err)
		}
		defer st.Close()
		stores = append(stores, st)
	}
	for i, st := range stores {
		if v, ok, err := st.Meta(kv.MetaCursorKey); !ok || err != nil || len(v) == 0 {
			t.Errorf("store %d does not answer: %v %v", i+1, ok, err)
		}
	}
	// Serving wrote nothing into the snapshot: it still verifies.
	if _, err := snapshots.Verify(snap); err != nil {
		t.Fatal(err)
	}
}

// TestOpenIgnoresUnlistedFiles adds files the manifest does not list to a
// store (a WAL that Pebble would replay, a table) and opens it with the
// manifest's list: they are never read, and reads answer as before.
func TestOpenIgnoresUnlistedFiles(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	m, _ := snapshots.ReadManifest(snap)
	store := filepath.Join(snap, "store")
	for _, name := range []string{"999999.sst", "999998.log", "MANIFEST-999997", "marker.manifest.000002.MANIFEST-999997"} {
		if err := os.WriteFile(filepath.Join(store, name), []byte("not pebble data"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Seen, the added marker points Pebble at a manifest that is not one.
	if st, err := kv.Open(store, 1<<20, nil, nil); err == nil {
		st.Close()
		t.Fatal("with every file visible the store opened; this test no longer shows the list matters")
	}
	st, err := kv.Open(store, 1<<20, m.FilesIn("store"), nil)
	if err != nil {
		t.Fatalf("with the manifest's list: %v", err)
	}
	defer st.Close()
	if _, ok, err := st.Meta(kv.MetaCursorKey); !ok || err != nil {
		t.Fatalf("read: %v %v", ok, err)
	}
}

func TestOpenErrorSaysWhy(t *testing.T) {
	dir := t.TempDir()
	_, err := kv.Open(filepath.Join(dir, "nope"), 1<<20, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "cannot open the store") || !strings.Contains(err.Error(), "there is no such folder") {
		t.Fatalf("missing store: %v", err)
	}
}

// TestReadsInAnyOrder reads every key of the identity and alias tables, and
// a key just before and just after each, through one Reader and through the
// store's pooled point reads, in key order, in reverse and shuffled: a read
// finds exactly the stored value or nothing, whatever was read before it on
// the same iterator (the seek limit, the pool's reuse). It does so with the
// snapshot's point index mapped and read with pread, and Scan lists the same
// identity views.
func TestReadsInAnyOrder(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.SearchInput(t, 300))
	m, _ := snapshots.ReadManifest(snap)
	if !slices.ContainsFunc(m.Files, func(f snapshots.File) bool { return f.Path == snapshots.PointsPath }) {
		t.Fatalf("the manifest does not list the point index %s", snapshots.PointsPath)
	}
	for _, mapped := range []bool{false, true} {
		t.Run(fmt.Sprint("mapped=", mapped), func(t *testing.T) {
			st := openStore(t, snap, m, 1<<20, mapped)
			defer st.Close()
			readsInAnyOrder(t, st)
		})
	}
}

// openStore opens snap's store with a block cache of cacheBytes, and its
// point index mapped, or read with pread.
func openStore(tb testing.TB, snap string, m snapshots.Manifest, cacheBytes int64, mapped bool) *kv.Store {
	tb.Helper()
	st, err := kv.Open(filepath.Join(snap, "store"), cacheBytes, m.FilesIn("store"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	use := st.ReadPoints
	if mapped {
		use = st.UsePoints
	}
	if err := use(filepath.Join(snap, snapshots.PointsPath), nil); err != nil {
		st.Close()
		tb.Fatal(err)
	}
	return st
}

func readsInAnyOrder(t *testing.T, st *kv.Store) {
	stored := map[string]string{}
	var keys []string
	for _, tag := range []byte{kv.TagIdentity, kv.TagAlias} {
		err := st.Scan(tag, func(k, v []byte) error {
			key := string([]byte{tag, 0}) + string(k)
			stored[key] = string(v)
			keys = append(keys, key, key[:len(key)-1], key+"\x00", key+"\xff")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(stored) < 600 {
		t.Fatalf("only %d keys stored", len(stored))
	}
	reversed := slices.Clone(keys)
	slices.Reverse(reversed)
	shuffled := slices.Clone(keys)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	for name, order := range map[string][]string{"sorted": sorted, "reversed": reversed, "shuffled": shuffled} {
		r, err := st.NewReader()
		if err != nil {
			t.Fatal(err)
		}
		if !r.Keyed(kv.TagIdentity) {
			t.Fatal("the Reader's identity reads are not hash probes")
		}
		for _, k := range order {
			want, has := stored[k]
			got, ok, err := r.Get([]byte(k), nil)
			if err != nil || ok != has || string(got) != want {
				t.Fatalf("%s, Reader: %q: ok %v err %v, %d bytes; want ok %v, %d bytes", name, k, ok, err, len(got), has, len(want))
			}
			if k[0] != kv.TagIdentity || !strings.HasSuffix(k, "\x00") {
				continue
			}
			subject := strings.TrimSuffix(k[2:], "\x00")
			got, ok, err = st.View(kv.TagIdentity, subject, "", nil)
			if err != nil || ok != has || string(got) != want {
				t.Fatalf("%s, View: %q: ok %v err %v; want ok %v", name, subject, ok, err, has)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
