package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/snapshots"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := runCmd(args...)
		if code != 0 || !strings.HasPrefix(out, "pds ") || !strings.Contains(out, "\nsnapshot format 7 (reads formats 1 to 7)\n") {
			t.Errorf("%v: %d %q", args, code, out)
		}
	}
}

// The probes, the admin listener's metrics, a damaged snapshot refused once
// (remembered by fingerprint, not re-verified every tick), and a clean drain
// that exits 0.
func TestServeOperable(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	bad := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	m, err := snapshots.ReadManifest(bad)
	if err != nil {
		t.Fatal(err)
	}
	// Damage a listed file without changing its size.
	f := filepath.Join(bad, filepath.FromSlash(m.Files[0].Path))
	raw, _ := os.ReadFile(f)
	for i := range raw {
		raw[i] ^= 0xff
	}
	os.WriteFile(f, raw, 0o644)
	dir := t.TempDir()
	current := filepath.Join(dir, "current")
	os.Symlink(snap, current)
	keysPath, secrets := ingesttest.Keys(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--snapshot", current,
			"--keys", keysPath, "--watch", "20ms", "--drain", "10ms"}, io.Discard, stderr)
	}()
	re := regexp.MustCompile(`"msg":"serving","addr":"([^"]+)","admin_addr":"([^"]+)"`)
	var base, admin string
	for i := 0; i < 400 && base == ""; i++ {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			base, admin = "http://"+m[1], "http://"+m[2]
		}
		time.Sleep(25 * time.Millisecond)
	}
	if base == "" {
		t.Fatalf("serve did not start: %s", stderr.String())
	}
	// The start-up line says what the start waited for (make bench-serve reads it).
	if !regexp.MustCompile(`"msg":"serving",.*"verify_ms":[0-9]+,"open_ms":[0-9]+`).MatchString(stderr.String()) {
		t.Errorf("the serving line lacks verify_ms and open_ms: %s", stderr.String())
	}
	// On Linux it also says what the start read from disk (/proc/self/io).
	if _, err := os.Stat("/proc/self/io"); err == nil && !regexp.MustCompile(`"msg":"serving",.*"disk_read_kb":[0-9]+`).MatchString(stderr.String()) {
		t.Errorf("the serving line lacks disk_read_kb: %s", stderr.String())
	}
	// The search index is checked and opened after the start, and the log
	// says when it is ready (make bench-* wait for that line).
	for i := 0; i < 400 && !strings.Contains(stderr.String(), `"msg":"search index ready"`); i++ {
		time.Sleep(25 * time.Millisecond)
	}
	if !regexp.MustCompile(`"msg":"search index ready","build_id":"[0-9A-Z]+","took_ms":[0-9]+`).MatchString(stderr.String()) {
		t.Errorf("no search index ready line: %s", stderr.String())
	}
	get := func(url string) (int, string) {
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	status, body := get(base + "/readyz")
	var p map[string]any
	json.Unmarshal([]byte(body), &p)
	if status != 200 || p["status"] != "ok" || p["version"] == "" || p["build_id"] == "" {
		t.Fatalf("readyz %d %s", status, body)
	}
	if status, body := get(base + "/metrics"); status != 404 {
		t.Errorf("metrics on the public listener: %d %.80s", status, body)
	}
	status, body = get(admin + "/metrics")
	if status != 200 || !strings.Contains(body, "pds_snapshot_info{") || !strings.Contains(body, `pds_http_requests_total{code="200",method="GET",route="/readyz"} 1`) {
		t.Fatalf("admin metrics %d:\n%s", status, body)
	}

	// An MCP tool call is counted by tool and outcome.
	req, _ := http.NewRequest("POST", base+"/v1/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":"1","method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secrets[ingesttest.KeyFull])
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "whoami")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("mcp call: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	_, body = get(admin + "/metrics")
	if !strings.Contains(body, `pds_mcp_tool_calls_total{outcome="ok",tool="whoami"} 1`) {
		t.Errorf("tool call not counted")
	}

	tmp := filepath.Join(dir, "current.tmp")
	os.Symlink(bad, tmp)
	os.Rename(tmp, current)
	time.Sleep(500 * time.Millisecond) // many --watch ticks
	if n := strings.Count(stderr.String(), "new snapshot refused"); n != 1 {
		t.Errorf("the damaged snapshot was refused %d times, want once:\n%s", n, stderr.String())
	}
	if status, _ := get(base + "/readyz"); status != 200 {
		t.Errorf("not ready while serving the old snapshot: %d", status)
	}
	_, body = get(admin + "/metrics")
	if !strings.Contains(body, `pds_snapshot_swap_refusals_total{reason="verify_failed"} 1`) {
		t.Errorf("refusal not counted")
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after a clean drain: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	if !strings.Contains(stderr.String(), `"msg":"draining"`) {
		t.Errorf("no draining log line")
	}
}

// A snapshot whose point index has a night's layer on it says so in the
// serving line, with how many layers a read may probe.
func TestServeSaysThePointIndexLayers(t *testing.T) {
	night := ingesttest.BuildNight(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	keysPath, _ := ingesttest.Keys(t)
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--snapshot", night, "--keys", keysPath, "--drain", "10ms"}, io.Discard, stderr)
	}()
	defer func() { cancel(); <-done }()
	for i := 0; i < 400 && !strings.Contains(stderr.String(), `"msg":"serving"`); i++ {
		time.Sleep(25 * time.Millisecond)
	}
	if !regexp.MustCompile(`"msg":"serving",.*"point_index":true,.*"point_index_layers":1[,}]`).MatchString(stderr.String()) {
		t.Fatalf("the serving line does not say the point index has one layer: %s", stderr.String())
	}
}
