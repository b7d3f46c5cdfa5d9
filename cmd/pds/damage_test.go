package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/snapshots"
)

// TestChangedFilesNeverServeWrongAnswers changes files of a served snapshot
// under load, one file and one kind of change at a time: the point index, the
// largest store table, the largest search index file and its largest
// segment, each truncated,
// rewritten in place at the same size, or removed. The server must stay up,
// answer nothing but the snapshot's own answers as 200 (anything else is 503
// SERVICE_UNAVAILABLE), say "damaged" on /readyz, and serve again without a
// restart once the file is put back.
func TestChangedFilesNeverServeWrongAnswers(t *testing.T) {
	original := ingesttest.Build(t, filepath.Join(ingesttest.Root(), "sample-input"))
	keysPath, secrets := ingesttest.Keys(t)
	key := secrets["acme"]
	m, err := snapshots.ReadManifest(original)
	if err != nil {
		t.Fatal(err)
	}
	largest := func(prefix, suffix string) string {
		best := snapshots.File{}
		for _, f := range m.Files {
			if strings.HasPrefix(f.Path, prefix) && strings.HasSuffix(f.Path, suffix) && f.Size > best.Size {
				best = f
			}
		}
		return best.Path
	}
	// The search index's largest file, and its largest segment, which
	// Bleve maps into memory.
	files := []string{snapshots.PointsPath, largest(snapshots.StoreDir+"/", ""), largest(snapshots.IndexDir+"/", ""), largest(snapshots.IndexDir+"/", ".zap")}
	changes := []struct {
		name string
		do   func(path string) error
	}{
		{"truncated", func(p string) error {
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, st.Size()/2)
		}},
		{"rewritten", func(p string) error {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			st, _ := f.Stat()
			junk := make([]byte, st.Size())
			rand.Read(junk)
			_, err = f.WriteAt(junk, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}},
		{"removed", os.Remove},
	}
	for _, file := range files {
		for _, change := range changes {
			t.Run(file+"/"+change.name, func(t *testing.T) {
				snap := filepath.Join(t.TempDir(), "snap")
				if err := os.CopyFS(snap, os.DirFS(original)); err != nil {
					t.Fatal(err)
				}
				base, stderr := startServe(t, "--snapshot", snap, "--keys", keysPath, "--watch", "100ms")
				paths := damageProbePaths()
				want := map[string]string{}
				for _, p := range paths {
					status, body := damageGet(base+p, key)
					if status != http.StatusOK {
						t.Fatalf("GET %s before the change: %d %s", p, status, body)
					}
					want[p] = body
				}

				load := startProbes(base, key, paths, want, 4)
				time.Sleep(300 * time.Millisecond)
				if err := change.do(filepath.Join(snap, filepath.FromSlash(file))); err != nil {
					t.Fatal(err)
				}
				ready := waitReady(base, "damaged")
				time.Sleep(300 * time.Millisecond)
				c := load.stop()
				t.Logf("%d answers as before, %d refused with 503, %d wrong, %d other", c.ok, c.unavailable, c.wrong, c.other)
				if c.wrong > 0 || c.other > 0 {
					t.Fatalf("%d wrong answers and %d other answers; the first: %v", c.wrong, c.other, c.firstWrong)
				}
				if !strings.Contains(ready, `"damaged"`) {
					t.Fatalf("/readyz after the change: %s", ready)
				}

				// Put the file back: the server serves again, no restart.
				dst := filepath.Join(snap, filepath.FromSlash(file))
				os.Remove(dst)
				b, err := os.ReadFile(filepath.Join(original, filepath.FromSlash(file)))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(dst, b, 0o644); err != nil {
					t.Fatal(err)
				}
				if ready := waitReady(base, "ok"); !strings.Contains(ready, `"ok"`) {
					t.Fatalf("/readyz after the file was put back: %s\n%s", ready, stderr)
				}
				for _, p := range paths {
					if status, body := damageGet(base+p, key); status != http.StatusOK || body != want[p] {
						t.Fatalf("GET %s after the repair: %d %s", p, status, body)
					}
				}
			})
		}
	}
}

// probes are clients reading paths from a server until stopped, each answer
// sorted: as before (want), refused with 503 SERVICE_UNAVAILABLE, a wrong
// 200, or anything else.
type probes struct {
	done                          chan struct{}
	wg                            sync.WaitGroup
	ok, unavailable, wrong, other atomic.Int64
	firstWrong                    atomic.Value
}

// probeCounts is what the probes saw, and the first answer that was not as
// before or a 503.
type probeCounts struct {
	ok, unavailable, wrong, other int64
	firstWrong                    any
}

// startProbes starts n clients reading paths from base with key.
func startProbes(base, key string, paths []string, want map[string]string, n int) *probes {
	l := &probes{done: make(chan struct{})}
	for w := range n {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := w; ; i++ {
				select {
				case <-l.done:
					return
				default:
				}
				p := paths[i%len(paths)]
				status, body := damageGet(base+p, key)
				switch {
				case status == http.StatusOK && body == want[p]:
					l.ok.Add(1)
				case status == http.StatusOK:
					l.wrong.Add(1)
					l.firstWrong.CompareAndSwap(nil, p+": "+body)
				case status == http.StatusServiceUnavailable && strings.Contains(body, `"SERVICE_UNAVAILABLE"`):
					l.unavailable.Add(1)
				default:
					l.other.Add(1)
					l.firstWrong.CompareAndSwap(nil, fmt.Sprintf("%s: %d %s", p, status, body))
				}
			}
		}()
	}
	return l
}

// stop stops the clients and says what they saw.
func (l *probes) stop() probeCounts {
	close(l.done)
	l.wg.Wait()
	return probeCounts{l.ok.Load(), l.unavailable.Load(), l.wrong.Load(), l.other.Load(), l.firstWrong.Load()}
}

// damageProbePaths are the reads of the load: identity, passport and
// evidence of some of the sample's products, and searches.
func damageProbePaths() []string {
	var out []string
	for _, id := range []string{"09520123456788", "gtin:07614189192581", "internal_sku:DEMO-OAT-1L", "00012345600012"} {
		out = append(out, "/v1/products/"+id, "/v1/products/"+id+"/dpp", "/v1/products/"+id+"/evidence")
	}
	for _, q := range []string{"havregarden", "ticino", "acme"} {
		out = append(out, "/v1/products/search?manufacturer="+q)
	}
	return slices.Clip(out)
}

// damageGet reads url with key and returns the status and the body with its
// request id and duration left out (they differ between two answers).
func damageGet(url, key string) (int, string) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var v map[string]any
	if json.Unmarshal(b, &v) != nil {
		return res.StatusCode, string(b)
	}
	delete(v, "request_id")
	if meta, ok := v["meta"].(map[string]any); ok {
		delete(meta, "duration_ms")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return res.StatusCode, buf.String()
}

// waitReady polls /readyz until its status is want, for up to ten seconds,
// and returns the last answer.
func waitReady(base, want string) string {
	var last string
	for range 100 {
		res, err := http.Get(base + "/readyz")
		if err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			last = string(b)
			if strings.Contains(last, `"status":"`+want+`"`) {
				return last
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return last
}

// TestCutSearchSegmentUnderConcurrentSearches serves an incrementally built
// snapshot, whose search index has two segments (Bleve reads them on
// goroutines of its own), from a pds serve process of its own, while 8
// clients search; the largest segment is cut to half its size under them.
// The process must stay up, and every answer be the snapshot's own as 200 or
// 503 SERVICE_UNAVAILABLE. It is done a few times, each time with a fresh
// copy of the snapshot and a fresh server: the process died in one of the
// first three rounds, every time, when Bleve mapped the files themselves.
// Every other round keeps the copies in a folder (--search-copy-dir) rather
// than in memory.
func TestCutSearchSegmentUnderConcurrentSearches(t *testing.T) {
	original := twoSegmentSnapshot(t)
	keysPath, secrets := ingesttest.Keys(t)
	key := secrets[ingesttest.KeyFull]
	var paths []string
	for _, q := range []string{"nordic", "acme foods", "muller", "zeta pharma", "omega", "mueler dairy"} {
		paths = append(paths, "/v1/products/search?manufacturer="+url.QueryEscape(q), "/v1/products/search?limit=50&manufacturer="+url.QueryEscape(q))
	}
	paths = append(paths, "/v1/products/search?sort=updated_at&limit=100", "/v1/products/search?has_passport=true&limit=100", "/v1/products/search?trust_level_min=L3&limit=100")
	for round := range 10 {
		snap := filepath.Join(t.TempDir(), "snap")
		if err := os.CopyFS(snap, os.DirFS(original)); err != nil {
			t.Fatal(err)
		}
		segment := largestSegment(t, snap)
		args := []string{"--snapshot", snap, "--keys", keysPath, "--watch", "100ms"}
		copyDir := ""
		if round%2 == 1 {
			copyDir = t.TempDir()
			args = append(args, "--search-copy-dir", copyDir)
		}
		base, exited, stderr := startServeProcess(t, args...)
		want := map[string]string{}
		for _, p := range paths {
			status, body := damageGet(base+p, key)
			if status != http.StatusOK {
				t.Fatalf("GET %s before the cut: %d %s", p, status, body)
			}
			want[p] = body
		}

		load := startProbes(base, key, paths, want, 8)
		time.Sleep(300 * time.Millisecond)
		st, err := os.Stat(segment)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(segment, st.Size()/2); err != nil {
			t.Fatal(err)
		}
		ready := waitReady(base, "damaged")
		time.Sleep(300 * time.Millisecond)
		c := load.stop()
		t.Logf("round %d: %d answers as before, %d refused with 503, %d wrong, %d other", round, c.ok, c.unavailable, c.wrong, c.other)
		select {
		case err := <-exited:
			t.Fatalf("round %d: the server died after %s was cut: %v\n%s", round, filepath.Base(segment), err, crashLines(stderr.String(), 30))
		default:
		}
		if c.wrong > 0 || c.other > 0 {
			t.Fatalf("round %d: %d wrong answers and %d other answers; the first: %v", round, c.wrong, c.other, c.firstWrong)
		}
		if !strings.Contains(ready, `"damaged"`) {
			t.Fatalf("round %d: /readyz after the cut: %s", round, ready)
		}
		if copyDir != "" && !strings.Contains(stderr.String(), `"search_copy_dir":"`+copyDir+`"`) {
			t.Fatalf("round %d: the serving line does not name the copy folder: %s", round, stderr.String())
		}
	}
}

// twoSegmentSnapshot builds a snapshot of 3000 products, then builds on it
// incrementally with 600 more: a snapshot whose search index has two
// segments, the base's and the night's.
func twoSegmentSnapshot(t *testing.T) string {
	t.Helper()
	in := ingesttest.SearchInput(t, 3600)
	lines := strings.SplitAfter(readText(t, filepath.Join(in, "products.ndjson")), "\n")
	baseIn, night := t.TempDir(), t.TempDir()
	for name, text := range map[string]string{
		"sources.ndjson":  readText(t, filepath.Join(in, "sources.ndjson")),
		"products.ndjson": strings.Join(lines[:3000], ""),
	} {
		if err := os.WriteFile(filepath.Join(baseIn, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(night, "products.ndjson"), []byte(strings.Join(lines[3000:3600], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b1, b2 := filepath.Join(dir, "b1"), filepath.Join(dir, "b2")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: baseIn, Out: b1, Rejects: io.Discard, Sequence: 1, KeepRecords: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Run(context.Background(), ingest.Options{In: night, Out: b2, Base: b1, Rejects: io.Discard, Sequence: 2}); err != nil {
		t.Fatal(err)
	}
	segments, err := filepath.Glob(filepath.Join(b2, snapshots.IndexDir, "*", "*", "*.zap"))
	if err != nil || len(segments) != 2 {
		t.Fatalf("the incremental build's search index has %d segments, want 2 (%v)", len(segments), err)
	}
	return b2
}

// largestSegment is the path of the largest Bleve segment of the snapshot
// at dir.
func largestSegment(t *testing.T, dir string) string {
	t.Helper()
	segments, _ := filepath.Glob(filepath.Join(dir, snapshots.IndexDir, "*", "*", "*.zap"))
	best, size := "", int64(-1)
	for _, p := range segments {
		if st, err := os.Stat(p); err == nil && st.Size() > size {
			best, size = p, st.Size()
		}
	}
	if best == "" {
		t.Fatalf("no segments in %s", dir)
	}
	return best
}

// startServeProcess starts pds serve with args in a process of its own (this
// test binary, through mainArgsEnv), killed at the end of the test, and
// returns its address, a channel that receives its exit, and its stderr.
func startServeProcess(t *testing.T, args ...string) (string, <-chan error, *syncBuffer) {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), "\n"))
	stderr := &syncBuffer{}
	child.Stderr = stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	t.Cleanup(func() { child.Process.Kill() })
	re := regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)
	for range 800 {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return "http://" + m[1], exited, stderr
		}
		select {
		case err := <-exited:
			t.Fatalf("serve exited: %v\n%s", err, stderr.String())
		case <-time.After(25 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not start: %s", stderr.String())
	return "", nil, nil
}

// crashLines is n lines of a dead process's stderr s, from the first that
// says why it died (the last n when none does).
func crashLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	from := max(0, len(lines)-n)
	for i, l := range lines {
		if strings.HasPrefix(l, "unexpected fault address") || strings.HasPrefix(l, "fatal error") || strings.HasPrefix(l, "panic") {
			from = i
			break
		}
	}
	return strings.Join(lines[from:min(len(lines), from+n)], "\n")
}

// readText reads the file at path.
func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
