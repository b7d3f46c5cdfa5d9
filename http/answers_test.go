package http_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/snapshots"
)

// Each evidence link carries its source in short (id, kind
// and licence terms), each full Source is once in the envelope's sources, and
// covers is served nowhere.
func TestEvidenceLinksCarryAShortSource(t *testing.T) {
	e := newEnv(t)
	r := e.do(t, "GET", "/v1/products/"+demo+"/evidence", ingesttest.KeyFull, "")
	if r.status != 200 || r.json["status"] != "found" {
		t.Fatalf("evidence: %d %s", r.status, r.body)
	}
	full := map[string]map[string]any{}
	for _, s := range r.json["sources"].([]any) {
		src := s.(map[string]any)
		id := src["id"].(string)
		if full[id] != nil {
			t.Errorf("source %s listed twice in sources", id)
		}
		full[id] = src
	}
	want := []string{"attribution_required", "id", "kind", "licence_name", "may_redistribute_derived", "may_redistribute_verbatim"}
	links := 0
	for _, c := range ingesttest.Get(r.json, "data.chains").([]any) {
		for _, l := range c.(map[string]any)["links"].([]any) {
			links++
			src := l.(map[string]any)["source"].(map[string]any)
			var got []string
			for k := range src {
				got = append(got, k)
			}
			if strings.Join(sorted(got), ",") != strings.Join(want, ",") {
				t.Errorf("link source members %v, want %v", sorted(got), want)
			}
			f := full[src["id"].(string)]
			if f == nil {
				t.Errorf("link source %v is not in the envelope's sources", src["id"])
				continue
			}
			for _, k := range want {
				if a, b := mustJSON(t, src[k]), mustJSON(t, f[k]); a != b {
					t.Errorf("link source %s = %s, full source says %s", k, a, b)
				}
			}
		}
	}
	if links == 0 {
		t.Fatal("the fixture's evidence has no links")
	}
	for _, path := range []string{"/v1/products/" + demo + "/evidence", "/v1/products/" + demo + "/dpp", "/v1/sources/" + srcReg} {
		if r := e.do(t, "GET", path, ingesttest.KeyFull, ""); bytes.Contains(r.body, []byte(`"covers"`)) || bytes.Contains(r.body, []byte(`gtin_prefixes`)) {
			t.Errorf("%s serves covers: %s", path, r.body)
		}
	}
}

// Answers are compressed with gzip or zstd when the client
// asks, from MinCompressSize bytes on, with Vary: Accept-Encoding, and not
// compressed when it does not ask.
func TestLargeAnswersCompressedWhenAsked(t *testing.T) {
	e := newEnv(t)
	evidence := "/v1/products/" + demo + "/evidence"
	plain := rawGet(t, e, evidence, "")
	if plain.header.Get("Content-Encoding") != "" || !json.Valid(plain.body) {
		t.Fatalf("without Accept-Encoding: Content-Encoding %q", plain.header.Get("Content-Encoding"))
	}
	if len(plain.body) < 1024 {
		t.Fatalf("the evidence answer is %d bytes, too small to show compression", len(plain.body))
	}
	cases := []struct {
		accept, want string
	}{
		{"gzip", "gzip"},
		{"zstd", "zstd"},
		{"gzip, zstd", "zstd"},
		{"gzip;q=1, zstd;q=0.5", "gzip"},
		{"br", ""},
		{"identity", ""},
	}
	for _, c := range cases {
		t.Run(c.accept, func(t *testing.T) {
			r := rawGet(t, e, evidence, c.accept)
			if got := r.header.Get("Content-Encoding"); got != c.want {
				t.Fatalf("Content-Encoding %q, want %q", got, c.want)
			}
			if !strings.Contains(strings.Join(r.header.Values("Vary"), ","), "Accept-Encoding") {
				t.Errorf("Vary %q lacks Accept-Encoding", r.header.Values("Vary"))
			}
			body := decode(t, c.want, r.body)
			if c.want != "" && len(r.body) >= len(body) {
				t.Errorf("%s: %d bytes compressed from %d", c.want, len(r.body), len(body))
			}
			if got, want := blankAll(body), blankAll(plain.body); got != want {
				t.Errorf("decoded answer differs from the plain one:\n%s\n%s", got, want)
			}
			req := ingesttest.NewRequest(t, "GET", e.url+evidence, e.keys[ingesttest.KeyFull], "")
			ingesttest.CheckResponse(t, req, r.status, r.header, body)
		})
	}
	// A small answer is sent as it is, even to a client that asks.
	small := rawGet(t, e, "/v1/whoami", "gzip, zstd")
	if small.header.Get("Content-Encoding") != "" || !json.Valid(small.body) {
		t.Errorf("whoami (%d bytes) was compressed: %q", len(small.body), small.header.Get("Content-Encoding"))
	}
	if !strings.Contains(strings.Join(small.header.Values("Vary"), ","), "Accept-Encoding") {
		t.Errorf("small answer: Vary %q lacks Accept-Encoding", small.header.Values("Vary"))
	}
}

// Every answer read from a snapshot names it in
// meta.snapshot and in headers; product reads carry an ETag made of the
// build id and the answer, and If-None-Match answers 304.
func TestAnswersNameTheirSnapshotAndETag(t *testing.T) {
	e := newEnv(t)
	m, err := snapshots.ReadManifest(e.snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/products/" + demo, "/v1/products/" + demo + "/dpp", "/v1/products/" + demo + "/evidence",
		"/v1/products/gtin:09520000000028", "/v1/sources/" + srcReg, "/v1/products/search?manufacturer=demo"} {
		r := e.do(t, "GET", path, ingesttest.KeyFull, "")
		if got := ingesttest.Get(r.json, "meta.snapshot.build_id"); got != m.BuildID {
			t.Errorf("%s: meta.snapshot.build_id %v, want %s", path, got, m.BuildID)
		}
		if got := ingesttest.Get(r.json, "meta.snapshot.created_at"); got != m.CreatedAt {
			t.Errorf("%s: meta.snapshot.created_at %v, want %s", path, got, m.CreatedAt)
		}
		if r.header.Get("Pds-Build-Id") != m.BuildID || r.header.Get("Pds-Snapshot-Created-At") != m.CreatedAt {
			t.Errorf("%s: headers %q %q", path, r.header.Get("Pds-Build-Id"), r.header.Get("Pds-Snapshot-Created-At"))
		}
	}
	r := e.do(t, "POST", "/v1/products/resolve", ingesttest.KeyFull, `{"identifiers":["`+demo+`"]}`)
	if got := ingesttest.Get(r.json, "meta.snapshot.build_id"); got != m.BuildID {
		t.Errorf("resolve: meta.snapshot.build_id %v", got)
	}
	if r := e.do(t, "GET", "/v1/whoami", ingesttest.KeyFull, ""); ingesttest.Get(r.json, "meta.snapshot") != nil {
		t.Errorf("whoami reads no snapshot but names one: %s", r.body)
	}

	etags := map[string]string{}
	for _, path := range []string{"/v1/products/" + demo, "/v1/products/" + demoSub, "/v1/products/" + demo + "/dpp", "/v1/products/" + demo + "/evidence", "/v1/products/" + bare} {
		r := e.do(t, "GET", path, ingesttest.KeyFull, "")
		etag := r.header.Get("ETag")
		if !strings.HasPrefix(etag, `W/"`+m.BuildID+"-") || !strings.HasSuffix(etag, `"`) {
			t.Fatalf("%s: ETag %q", path, etag)
		}
		etags[path] = etag
		for _, inm := range []string{etag, `"other", ` + etag, strings.TrimPrefix(etag, "W/"), "*"} {
			nm := e.do(t, "GET", path, ingesttest.KeyFull, "", "If-None-Match", inm)
			if nm.status != http.StatusNotModified || len(nm.body) != 0 || nm.header.Get("ETag") != etag {
				t.Errorf("%s If-None-Match %s: %d %q ETag %q", path, inm, nm.status, nm.body, nm.header.Get("ETag"))
			}
		}
		if stale := e.do(t, "GET", path, ingesttest.KeyFull, "", "If-None-Match", `W/"`+m.BuildID+`-0"`); stale.status != 200 {
			t.Errorf("%s with a stale ETag: %d", path, stale.status)
		}
	}
	// The same answer keeps its tag from call to call (request_id and
	// duration_ms differ). The bare form's answer echoes interpreted_as, so
	// it is another answer than the subject form's, with another tag.
	if again := e.do(t, "GET", "/v1/products/"+demoSub, ingesttest.KeyFull, ""); again.header.Get("ETag") != etags["/v1/products/"+demoSub] {
		t.Errorf("one answer, two ETags: %s then %s", etags["/v1/products/"+demoSub], again.header.Get("ETag"))
	}
	if etags["/v1/products/"+demo] == etags["/v1/products/"+demoSub] {
		t.Errorf("the answer echoing interpreted_as shares the plain answer's ETag: %v", etags)
	}
	if etags["/v1/products/"+demo] == etags["/v1/products/"+bare] || etags["/v1/products/"+demo] == etags["/v1/products/"+demo+"/dpp"] {
		t.Errorf("different answers share an ETag: %v", etags)
	}
	// Another tenant's view is another answer.
	if r := e.do(t, "GET", "/v1/products/"+demo+"/dpp", ingesttest.KeyAcme, ""); r.header.Get("ETag") == etags["/v1/products/"+demo+"/dpp"] {
		t.Errorf("acme's passport has the public one's ETag")
	}
}

type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// rawGet sends a GET with the given Accept-Encoding (none when empty) and
// returns the body as it came over the wire.
func rawGet(t *testing.T, e *env, path, acceptEncoding string) rawResponse {
	t.Helper()
	req := ingesttest.NewRequest(t, "GET", e.url+path, e.keys[ingesttest.KeyFull], "")
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	// A transport of its own, which neither adds Accept-Encoding nor
	// decompresses.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("%s: %d %s", path, res.StatusCode, body)
	}
	return rawResponse{res.StatusCode, res.Header, body}
}

func decode(t *testing.T, coding string, b []byte) []byte {
	t.Helper()
	var rd io.Reader
	switch coding {
	case "":
		return b
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		rd = zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		rd = zr
	}
	out, err := io.ReadAll(rd)
	if err != nil {
		t.Fatalf("%s: %v", coding, err)
	}
	return out
}

func blankAll(b []byte) string { return string(volatile.ReplaceAllFunc(b, blank)) }

func sorted(s []string) []string {
	return slices.Sorted(slices.Values(s))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
