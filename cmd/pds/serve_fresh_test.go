package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/snapshots/fleet"
	"github.com/productdata/pds/snapshots/trust"
)

// trustedReplica is a replica's snapshots folder holding one build taken
// from a file:// origin through a root of trust.
type trustedReplica struct {
	t        *testing.T
	origin   fleet.Origin
	ts       *trust.Signer
	rootPath string // the root statement the replica is provisioned with
	snaps    string // the snapshots folder: snaps/current, snaps/.trust
}

func newTrustedReplica(t *testing.T) *trustedReplica {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	signer := func(name string) (*trust.Signer, *metadata.Key) {
		kp, pp := filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
		if _, err := trust.GenerateKey(kp, pp); err != nil {
			t.Fatal(err)
		}
		s, err := trust.ReadSigner(kp)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := trust.ReadKey(pp)
		if err != nil {
			t.Fatal(err)
		}
		return s, pub
	}
	rootKey, rootPub := signer("root")
	build, buildPub := signer("build")
	ts, tsPub := signer("timestamp")
	root, err := trust.NewRoot(trust.RootSpec{Deployment: "fresh-test", RootKeys: []*metadata.Key{rootPub}, RootThreshold: 1,
		BuildKeys: []*metadata.Key{buildPub}, TimestampKeys: []*metadata.Key{tsPub}, Expires: time.Now().AddDate(1, 0, 0)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if root, err = trust.SignRoot(root, rootKey); err != nil {
		t.Fatal(err)
	}
	o, err := fleet.OpenOrigin("file://"+filepath.Join(dir, "origin"), fleet.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trust.PublishRoot(ctx, fleet.TrustStore(o), root); err != nil {
		t.Fatal(err)
	}
	r := &trustedReplica{t: t, origin: o, ts: ts, rootPath: filepath.Join(dir, "root.json"), snaps: filepath.Join(dir, "snaps")}
	if err := os.WriteFile(r.rootPath, root, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "build")
	if _, err := ingest.Run(ctx, ingest.Options{In: ingesttest.WriteCase(t, ingesttest.CaseFile("passport")), Out: out, Rejects: io.Discard, Sequence: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := fleet.Publish(ctx, out, o, fleet.PublishOptions{Trust: &fleet.PublishTrust{Build: build, Timestamp: ts, Validity: 48 * time.Hour}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(r.snaps, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.pull(); err != nil {
		t.Fatal(err)
	}
	return r
}

// pull takes the origin's statements (and build) as 'pds snapshot pull'
// does.
func (r *trustedReplica) pull() error {
	replica, err := trust.ReadReplica(r.rootPath, r.snaps)
	if err != nil {
		return err
	}
	_, err = fleet.Pull(context.Background(), r.origin, r.snaps, fleet.PullOptions{Verifier: replica})
	return err
}

// renew renews the origin's timestamp for validity and pulls it. A short
// validity may run out before the pull takes it; then it renews again.
func (r *trustedReplica) renew(validity time.Duration) int64 {
	r.t.Helper()
	for i := 0; ; i++ {
		v, _, err := trust.RenewTimestamp(context.Background(), fleet.TrustStore(r.origin), r.ts, validity, time.Now())
		if err != nil {
			r.t.Fatal(err)
		}
		err = r.pull()
		if err == nil {
			return v
		}
		if !errors.Is(err, trust.ErrExpired) || i == 20 {
			r.t.Fatalf("pull after renewing the timestamp: %v", err)
		}
	}
}

// readyz is /readyz's status code and body.
func readyz(t *testing.T, base string) (int, map[string]any) {
	t.Helper()
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var p map[string]any
	if err := json.NewDecoder(res.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, p
}

// waitStale polls /readyz until its trust object says stale is want, for
// a minute at most.
func waitStale(t *testing.T, base string, want bool) (int, map[string]any) {
	t.Helper()
	var code int
	var p map[string]any
	for i := 0; i < 1200; i++ {
		code, p = readyz(t, base)
		if tr, ok := p["trust"].(map[string]any); ok && tr["stale"] == want {
			return code, p
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("/readyz never said stale %v: %d %v", want, code, p)
	return 0, nil
}

func adminURL(t *testing.T, logs *syncBuffer) string {
	t.Helper()
	m := regexp.MustCompile(`"msg":"serving",.*"admin_addr":"([^"]+)"`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no admin address in the serving line: %s", logs.String())
	}
	return "http://" + m[1]
}

func metricsText(t *testing.T, admin string) string {
	t.Helper()
	_, _, body := fetch(t, admin+"/metrics")
	return body
}

// apiGet is an API call that reads the snapshot: status, header and body.
func apiGet(t *testing.T, base, key string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/v1/products/09520123456788", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// mcpGetProduct calls the get_product tool and answers the body.
func mcpGetProduct(t *testing.T, base, key string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":"1","method":"tools/call","params":{"name":"get_product","arguments":{"identifier":"09520123456788"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "get_product")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// A server with a root of trust reports when the replica's timestamp
// expires; once it has, the default keeps answering and says stale, and
// --stale refuse answers 503 (REST, MCP and /readyz) until the timestamp
// is renewed. A server without a root reports the data's age alone.
func TestServeReportsTrustFreshness(t *testing.T) {
	r := newTrustedReplica(t)
	keysPath, secrets := ingesttest.Keys(t)
	key := secrets[ingesttest.KeyFull]
	current := filepath.Join(r.snaps, "current")

	plain, plainLogs := startServe(t, "--snapshot", current, "--keys", keysPath, "--admin-addr", "127.0.0.1:0")
	code, p := readyz(t, plain)
	if _, ok := p["data_age_seconds"].(float64); code != 200 || !ok || p["trust"] != nil || p["build_id"] == nil || p["snapshot_created_at"] == nil {
		t.Errorf("readyz without a root of trust: %d %v", code, p)
	}
	if body := metricsText(t, adminURL(t, plainLogs)); strings.Contains(body, "pds_trust_") || !strings.Contains(body, "pds_snapshot_created_timestamp_seconds ") {
		t.Errorf("metrics without a root of trust:\n%s", body)
	}
	if code, _, errOut := runCmd("serve", "--snapshot", current, "--keys", keysPath, "--stale", "refuse"); code != 2 || !strings.Contains(errOut, "--stale refuse needs a root of trust") {
		t.Errorf("--stale refuse without a root: exit %d %s", code, errOut)
	}
	if code, _, errOut := runCmd("serve", "--snapshot", current, "--keys", keysPath, "--trust-root", r.rootPath, "--stale", "never"); code != 2 || !strings.Contains(errOut, "--stale") {
		t.Errorf("--stale never: exit %d %s", code, errOut)
	}

	args := []string{"--snapshot", current, "--keys", keysPath, "--trust-root", r.rootPath, "--watch", "20ms", "--admin-addr", "127.0.0.1:0"}
	serving, servingLogs := startServe(t, args...)
	refusing, refusingLogs := startServe(t, append(args, "--stale", "refuse")...)
	admin := adminURL(t, servingLogs)

	code, p = readyz(t, serving)
	tr, _ := p["trust"].(map[string]any)
	if _, ok := p["data_age_seconds"].(float64); code != 200 || p["status"] != "ok" || !ok || tr == nil || tr["stale"] != false || tr["root_version"] != float64(1) ||
		tr["expires_in_seconds"].(float64) < 3600 || tr["timestamp_version"].(float64) < 1 {
		t.Fatalf("readyz with a fresh timestamp: %d %v", code, p)
	}
	if _, err := time.Parse(time.RFC3339, tr["timestamp_expires"].(string)); err != nil {
		t.Errorf("timestamp_expires: %v", err)
	}
	body := metricsText(t, admin)
	for _, want := range []string{"pds_trust_stale 0", "pds_trust_root_version 1", "pds_trust_timestamp_expires_timestamp_seconds ", "pds_trust_timestamp_version "} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
	if code, _, body := apiGet(t, refusing, key); code != 200 {
		t.Fatalf("--stale refuse with a fresh timestamp: %d %s", code, body)
	}

	// The origin's timestamp is renewed for a moment only, then the
	// origin falls silent.
	version := r.renew(2 * time.Second)
	code, p = waitStale(t, serving, true)
	tr = p["trust"].(map[string]any)
	if code != 200 || p["status"] != "ok" || tr["expires_in_seconds"].(float64) > 0 || tr["timestamp_version"] != float64(version) {
		t.Errorf("readyz of a stale replica that serves: %d %v", code, p)
	}
	if code, _, body := apiGet(t, serving, key); code != 200 {
		t.Errorf("--stale serve stopped answering: %d %s", code, body)
	}
	if body := metricsText(t, admin); !strings.Contains(body, "pds_trust_stale 1") {
		t.Errorf("metrics of a stale replica:\n%s", body)
	}

	code, p = waitStale(t, refusing, true)
	if code != 503 || p["status"] != "stale" || !strings.Contains(p["reason"].(string), "expired") {
		t.Errorf("readyz of a stale replica that refuses: %d %v", code, p)
	}
	code, h, body := apiGet(t, refusing, key)
	var prob map[string]any
	json.Unmarshal([]byte(body), &prob)
	if code != 503 || h.Get("Content-Type") != "application/problem+json" || h.Get("Retry-After") == "" ||
		prob["code"] != "SERVICE_UNAVAILABLE" || prob["retryable"] != true {
		t.Errorf("--stale refuse answered %d %v %s", code, h, body)
	}
	if body := mcpGetProduct(t, refusing, key); !strings.Contains(body, "SERVICE_UNAVAILABLE") {
		t.Errorf("MCP under --stale refuse: %s", body)
	}

	r.renew(48 * time.Hour)
	waitStale(t, serving, false)
	if code, p = waitStale(t, refusing, false); code != 200 || p["status"] != "ok" {
		t.Errorf("readyz once renewed: %d %v", code, p)
	}
	if code, _, body := apiGet(t, refusing, key); code != 200 {
		t.Errorf("--stale refuse once renewed: %d %s", code, body)
	}
	// Each turn is logged once (the log is written out every 100 ms).
	for _, logs := range []*syncBuffer{servingLogs, refusingLogs} {
		for i := 0; i < 200 && !strings.Contains(logs.String(), `"msg":"trust timestamp renewed`); i++ {
			time.Sleep(25 * time.Millisecond)
		}
		for _, msg := range []string{`"msg":"trust timestamp expired`, `"msg":"trust timestamp renewed`} {
			if n := strings.Count(logs.String(), msg); n != 1 {
				t.Errorf("%s logged %d times, want once:\n%s", msg, n, logs.String())
			}
		}
	}
}
