package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/productdata/pds/internal/fixture"
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
	original := fixture.Build(t, filepath.Join(fixture.Root(), "sample-input"))
	keysPath, secrets := fixture.Keys(t)
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

				var wrong, unavailable, ok, other atomic.Int64
				var firstWrong atomic.Value
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for w := range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := w; ; i++ {
							select {
							case <-stop:
								return
							default:
							}
							p := paths[i%len(paths)]
							status, body := damageGet(base+p, key)
							switch {
							case status == http.StatusOK && body == want[p]:
								ok.Add(1)
							case status == http.StatusOK:
								wrong.Add(1)
								firstWrong.CompareAndSwap(nil, p+": "+body)
							case status == http.StatusServiceUnavailable && strings.Contains(body, `"SERVICE_UNAVAILABLE"`):
								unavailable.Add(1)
							default:
								other.Add(1)
								firstWrong.CompareAndSwap(nil, fmt.Sprintf("%s: %d %s", p, status, body))
							}
						}
					}()
				}
				time.Sleep(300 * time.Millisecond)
				if err := change.do(filepath.Join(snap, filepath.FromSlash(file))); err != nil {
					t.Fatal(err)
				}
				ready := waitReady(base, "damaged")
				time.Sleep(300 * time.Millisecond)
				close(stop)
				wg.Wait()
				t.Logf("%d answers as before, %d refused with 503, %d wrong, %d other", ok.Load(), unavailable.Load(), wrong.Load(), other.Load())
				if wrong.Load() > 0 || other.Load() > 0 {
					t.Fatalf("%d wrong answers and %d other answers; the first: %v", wrong.Load(), other.Load(), firstWrong.Load())
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
