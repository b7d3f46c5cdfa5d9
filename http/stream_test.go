package http_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
	"github.com/productdata/pds/service/quota"
	"github.com/productdata/pds/snapshots"
)

// streamIDs are identifiers of every kind of item: found, not found,
// unknown, invalid, ambiguous, a tenant's own product, an empty line.
var streamIDs = []string{demo, "gtin:09520000000028", "00012345678905", "09520123456789", "9520000000011",
	"internal_sku:ACME-7", "gln:9520000000028", "internal_sku:SKU-1", "x y", "", "9520 1234 5678 8", "gtin:09520000000011"}

// postStream sends body to the resolve stream as key.
func postStream(t *testing.T, ctx context.Context, base, secret string, body io.Reader) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/products/resolve/stream", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/x-ndjson")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// streamSummary is a stream's last line.
type streamSummary struct {
	Summary struct {
		Complete bool `json:"complete"`
		Stopped  *struct {
			Code         string `json:"code"`
			Detail       string `json:"detail"`
			RetryAfter   int    `json:"retry_after"`
			ResumeAtLine int    `json:"resume_at_line"`
		} `json:"stopped"`
		Counts   map[string]int  `json:"counts"`
		Snapshot json.RawMessage `json:"snapshot"`
		Coverage json.RawMessage `json:"coverage"`
	} `json:"summary"`
}

// readStream reads a stream's answer: its item lines, and its summary.
func readStream(t *testing.T, res *http.Response) ([]json.RawMessage, streamSummary) {
	t.Helper()
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/x-ndjson" {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("stream answered %d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	var lines []json.RawMessage
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, json.RawMessage(bytes.Clone(sc.Bytes())))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatal("the stream has no lines")
	}
	var sum streamSummary
	if err := json.Unmarshal(lines[len(lines)-1], &sum); err != nil || sum.Summary.Counts == nil {
		t.Fatalf("last line is no summary (%v): %s", err, lines[len(lines)-1])
	}
	for _, l := range lines[:len(lines)-1] {
		if !json.Valid(l) {
			t.Fatalf("a line is not JSON: %s", l)
		}
	}
	return lines[:len(lines)-1], sum
}

// batchItems resolves ids with POST /v1/products/resolve, a call of up to
// 1000 at a time, and returns its items as they were written.
func batchItems(t *testing.T, base, secret string, ids []string) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for len(ids) > 0 {
		n := min(len(ids), 1000)
		req := ingesttest.NewRequest(t, "POST", base+"/v1/products/resolve", secret, resolveBody(ids[:n]...))
		status, _, body, _ := ingesttest.Send(t, req)
		if status != 200 {
			t.Fatalf("batch answered %d: %s", status, body)
		}
		var env struct {
			Data struct {
				Items []json.RawMessage `json:"items"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatal(err)
		}
		out = append(out, env.Data.Items...)
		ids = ids[n:]
	}
	return out
}

// sameItems fails t unless the stream's items are the batch's, byte for byte.
func sameItems(t *testing.T, got, want []json.RawMessage) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d items, want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("item %d:\n got %s\nwant %s", i+1, got[i], want[i])
		}
	}
}

// lines joins ids as a stream body.
func lines(ids []string) string { return strings.Join(ids, "\n") + "\n" }

// repeat returns n identifiers taken from ids in turn.
func repeat(ids []string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = ids[i%len(ids)]
	}
	return out
}

// A stream answers each line with the batch endpoint's item for it, in input
// order, across chunks, and ends with the counts; each caller sees its
// tenant's view.
func TestResolveStreamMatchesBatch(t *testing.T) {
	e := newEnv(t)
	ids := repeat(streamIDs, 2500) // three chunks, the last one short
	for _, key := range []string{ingesttest.KeyFull, ingesttest.KeyAcme} {
		res := postStream(t, context.Background(), e.url, e.keys[key], strings.NewReader(lines(ids)))
		if res.Header.Get("Pds-Build-Id") == "" {
			t.Errorf("%s: no Pds-Build-Id", key)
		}
		items, sum := readStream(t, res)
		want := batchItems(t, e.url, e.keys[key], ids)
		sameItems(t, items, want)
		counts := map[string]int{"total": len(ids)}
		for _, it := range want {
			var x struct{ Status string }
			json.Unmarshal(it, &x)
			counts[x.Status]++
		}
		for k, n := range counts {
			if sum.Summary.Counts[k] != n {
				t.Errorf("%s: counts.%s = %d, want %d", key, k, sum.Summary.Counts[k], n)
			}
		}
		if !sum.Summary.Complete || sum.Summary.Stopped != nil || len(sum.Summary.Snapshot) == 0 || len(sum.Summary.Coverage) == 0 {
			t.Errorf("%s: summary %+v", key, sum.Summary)
		}
	}
	// The tenant's own product is found by its tenant only.
	acme := batchItems(t, e.url, e.keys[ingesttest.KeyAcme], []string{"internal_sku:ACME-7"})
	full := batchItems(t, e.url, e.keys[ingesttest.KeyFull], []string{"internal_sku:ACME-7"})
	if !bytes.Contains(acme[0], []byte(`"status":"found"`)) || bytes.Contains(full[0], []byte(`"status":"found"`)) {
		t.Errorf("tenant views: acme %s, public %s", acme[0], full[0])
	}
}

// A line may be a JSON string or an object {"identifier": ...}: its item
// is the bare identifier's. A line that holds no identifier gets an invalid
// item of its own, and the lines after it are answered.
func TestResolveStreamLineForms(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("9", 70000) // past the reader's buffer, not only the line limit
	body := strings.Join([]string{
		`"` + demo + `"`,
		`{"identifier":"gtin:09520000000028"}`,
		`{"identifier":`,
		`{"id":"` + demo + `"}`,
		long,
		"\xff\xfe",
		demo + "\r",
		`"unterminated`,
		demo, // no final newline
	}, "\n")
	items, sum := readStream(t, postStream(t, context.Background(), e.url, e.keys[ingesttest.KeyFull], strings.NewReader(body)))
	want := batchItems(t, e.url, e.keys[ingesttest.KeyFull], []string{demo, "gtin:09520000000028", demo, demo})
	if len(items) != 9 || sum.Summary.Counts["total"] != 9 || sum.Summary.Counts["invalid"] != 5 {
		t.Fatalf("%d items, summary %+v", len(items), sum.Summary)
	}
	sameItems(t, []json.RawMessage{items[0], items[1], items[6], items[8]}, want)
	for _, i := range []int{2, 3, 4, 5, 7} {
		var it struct {
			Input, Status string
			Error         struct{ Code, Detail string }
		}
		if err := json.Unmarshal(items[i], &it); err != nil {
			t.Fatal(err)
		}
		if it.Status != "invalid" || it.Error.Code != "INVALID_REQUEST" || !strings.HasPrefix(it.Error.Detail, "line "+strconv.Itoa(i+1)+": ") {
			t.Errorf("line %d: %s", i+1, items[i])
		}
		if len(it.Input) > 100 {
			t.Errorf("line %d: the item echoes %d bytes of the line", i+1, len(it.Input))
		}
	}
}

// meteredEnv serves the fixture with keys of tenants "metered" (a quota of
// 2500 units a day) and "rated" (two requests, then one in 1000 s), on a
// clock the test moves.
func meteredEnv(t *testing.T) (base string, secrets map[string]string, clock *atomic.Int64) {
	t.Helper()
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	dir := t.TempDir()
	keysPath := filepath.Join(dir, "keys.json")
	secrets = map[string]string{}
	for name, n := range map[string]keys.New{
		"metered": {Tenant: "metered", Scopes: keys.AllScopes, Quota: 2500, QuotaPeriod: "day"},
		"rated":   {Tenant: "rated", Scopes: keys.AllScopes, Rate: 0.001, Burst: 2},
	} {
		s, _, err := keys.Add(keysPath, n, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		secrets[name] = s
	}
	ks, err := keys.Load(keysPath)
	if err != nil {
		t.Fatal(err)
	}
	clock = new(atomic.Int64)
	clock.Store(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC).UnixNano())
	meter, err := quota.Open(filepath.Join(dir, "usage"), func() time.Time { return time.Unix(0, clock.Load()) })
	if err != nil {
		t.Fatal(err)
	}
	s, err := service.OpenSnapshot(snap, snapshots.OpenOptions{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(s, ks, meter, ingesttest.Logger(t))
	t.Cleanup(svc.Close)
	srv := httptest.NewServer(pdshttp.New(svc, ingesttest.Logger(t), nil))
	t.Cleanup(srv.Close)
	return srv.URL, secrets, clock
}

// A quota reached mid-stream ends the stream with a summary that says so
// and where to resume; resumed from there once the quota renews, the two
// streams together are the whole answer. Each chunk of 1000 lines is billed
// before it is answered, so nothing past the summary's line was billed.
func TestResolveStreamQuotaStopsAndResumes(t *testing.T) {
	base, secrets, clock := meteredEnv(t)
	ids := repeat(streamIDs, 3500)
	items, sum := readStream(t, postStream(t, context.Background(), base, secrets["metered"], strings.NewReader(lines(ids))))
	st := sum.Summary.Stopped
	if sum.Summary.Complete || st == nil || st.Code != "TENANT_QUOTA_EXCEEDED" || st.ResumeAtLine != 2001 || st.RetryAfter < 1 || len(items) != 2000 {
		t.Fatalf("%d items, summary %s", len(items), summaryJSON(sum))
	}
	if sum.Summary.Counts["total"] != 2000 {
		t.Errorf("counts %v", sum.Summary.Counts)
	}
	// Nothing is left for a chunk of 1000: the next stream is refused whole.
	res := postStream(t, context.Background(), base, secrets["metered"], strings.NewReader(lines(ids[2000:])))
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	ingesttest.CheckResponse(t, res.Request, res.StatusCode, res.Header, body)
	if res.StatusCode != 429 || !bytes.Contains(body, []byte("TENANT_QUOTA_EXCEEDED")) || res.Header.Get("Retry-After") == "" {
		t.Fatalf("over the quota: %d %s", res.StatusCode, body)
	}
	clock.Add(int64(24 * time.Hour))
	rest, sum2 := readStream(t, postStream(t, context.Background(), base, secrets["metered"], strings.NewReader(lines(ids[st.ResumeAtLine-1:]))))
	if !sum2.Summary.Complete {
		t.Fatalf("resumed: %s", summaryJSON(sum2))
	}
	clock.Add(int64(24 * time.Hour))
	want := batchItems(t, base, secrets["metered"], ids[:2000])
	clock.Add(int64(24 * time.Hour))
	sameItems(t, append(items, rest...), append(want, batchItems(t, base, secrets["metered"], ids[2000:])...))
}

// A rate limit reached mid-stream ends it the same way: each chunk is one
// request.
func TestResolveStreamRateLimitStops(t *testing.T) {
	base, secrets, _ := meteredEnv(t)
	items, sum := readStream(t, postStream(t, context.Background(), base, secrets["rated"], strings.NewReader(lines(repeat(streamIDs, 2500)))))
	st := sum.Summary.Stopped
	if st == nil || st.Code != "RATE_LIMITED" || st.ResumeAtLine != 2001 || st.RetryAfter < 1 || len(items) != 2000 {
		t.Fatalf("%d items, summary %s", len(items), summaryJSON(sum))
	}
}

func summaryJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// endless is a stream body that never ends: lines of ids, over and over.
type endless struct {
	ids  []string
	i    int
	read atomic.Int64 // lines handed out
}

func (r *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		l := r.ids[r.i%len(r.ids)] + "\n"
		if n+len(l) > len(p) {
			break
		}
		n += copy(p[n:], l)
		r.i++
		r.read.Add(1)
	}
	return n, nil
}

// A client that goes away stops the work on its stream: the handler returns
// though the body never ends.
func TestResolveStreamStopsWhenClientLeaves(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	svc, secrets := ingesttest.Service(t, snap)
	h := pdshttp.New(svc, ingesttest.Logger(t), nil)
	var handling sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handling.Add(1)
		defer handling.Done()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	body := &endless{ids: streamIDs}
	res := postStream(t, ctx, srv.URL, secrets[ingesttest.KeyFull], body)
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	sc := bufio.NewScanner(res.Body)
	for i := 0; i < 3000 && sc.Scan(); i++ {
	}
	cancel()
	res.Body.Close()
	handling.Wait() // returns only if the server stopped on the stream
	sent := body.read.Load()
	if sent < 3000 {
		t.Fatalf("only %d lines sent", sent)
	}
}

// A stream's memory does not grow with its length: the heap after a
// million lines (a quarter of that under the race detector) is about what
// it was after the first tenth. (make bench-resolve streams ten million
// lines to a server of its own and reports its RSS.)
func TestResolveStreamHeapFlat(t *testing.T) {
	e := newEnv(t)
	const total = heapFlatLines
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriter(pw)
		for i := 0; i < total; i++ {
			w.WriteString(streamIDs[i%len(streamIDs)])
			w.WriteByte('\n')
		}
		w.Flush()
		pw.Close()
	}()
	res := postStream(t, context.Background(), e.url, e.keys[ingesttest.KeyFull], pr)
	defer res.Body.Close()
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	rd := bufio.NewReaderSize(res.Body, 1<<20)
	n := 0
	var early uint64
	var last []byte
	for {
		line, err := rd.ReadSlice('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == total/10 {
			early = heap()
		}
		last = append(last[:0], line...)
	}
	late := heap()
	if n != total+1 || !bytes.Contains(last, []byte(`"complete":true`)) {
		t.Fatalf("%d lines, last %s", n, last)
	}
	if late > early+16<<20 {
		t.Errorf("heap grew from %d MiB after %d lines to %d MiB after %d", early>>20, total/10, late>>20, total)
	}
}
