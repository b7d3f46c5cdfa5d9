package mcp_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
	"github.com/productdata/pds/service/quota"
	"github.com/productdata/pds/snapshots"
)

// whoami shows the caller's quota and rate limit, used and remaining, the
// same over REST and MCP, within the tool's outputSchema; it spends neither.
func TestWhoamiLimits(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	dir := t.TempDir()
	keysPath := filepath.Join(dir, "keys.json")
	secrets := map[string]string{}
	for name, n := range map[string]keys.New{
		"both":  {Tenant: "acme", Scopes: keys.AllScopes, Quota: 10, QuotaPeriod: "day", Rate: 0.5, Burst: 3},
		"quota": {Tenant: "acme", Scopes: keys.AllScopes, Quota: 10, QuotaPeriod: "day"},
		"free":  {Tenant: "free", Scopes: keys.AllScopes},
	} {
		s, _, err := keys.Add(keysPath, n, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		secrets[name] = s
	}
	secrets[ingesttest.KeyFull] = secrets["free"] // what listTools sends
	ks, _ := keys.Load(keysPath)
	now := time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC) // a frozen clock: nothing refills
	meter, err := quota.Open(filepath.Join(dir, "usage"), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	s, err := service.OpenSnapshot(snap, snapshots.OpenOptions{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(s, ks, meter, ingesttest.Logger(t))
	t.Cleanup(svc.Close)
	e := serve(t, svc, secrets)
	tools, _ := listTools(t, e)

	// Spend: two product reads with "both" (2 units, 2 tokens), one resolve
	// of three identifiers with "quota" (3 units of the same tenant).
	for range 2 {
		if r := e.do(t, "GET", "/v1/products/"+demo, "both", "", nil); r.status != 200 {
			t.Fatalf("read: %d %s", r.status, r.body)
		}
	}
	if r := e.do(t, "POST", "/v1/products/resolve", "quota", `{"identifiers":["`+demo+`","`+demo+`","`+demo+`"]}`, nil); r.status != 200 {
		t.Fatalf("resolve: %d %s", r.status, r.body)
	}

	quotaWant := map[string]any{"limit": 10.0, "period": "day", "used": 5.0, "remaining": 5.0, "resets_at": "2026-11-24T00:00:00Z"}
	cases := []struct {
		key  string
		want map[string]any
	}{
		{"both", map[string]any{"quota": quotaWant,
			"rate": map[string]any{"per_second": 0.5, "burst": 3.0, "used": 2.0, "remaining": 1.0, "full_in_seconds": 4.0}}},
		{"quota", map[string]any{"quota": quotaWant, "rate": nil}},
		{"free", map[string]any{"quota": nil, "rate": nil}},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			// Twice each way: whoami bills nothing and takes no token.
			for range 2 {
				rest := e.do(t, "GET", "/v1/whoami", c.key, "", nil)
				if got := ingesttest.Get(rest.json, "data.limits"); !reflect.DeepEqual(got, any(c.want)) {
					g, _ := json.Marshal(got)
					t.Fatalf("REST data.limits %s, want %v", g, c.want)
				}
				r := e.do(t, "POST", "/v1/mcp", c.key, rpc(1, "tools/call", callParams("whoami", map[string]any{})), headers("tools/call", "whoami", nil))
				sc, _ := ingesttest.Get(r.json, "result.structuredContent").(map[string]any)
				if got := ingesttest.Get(sc, "data.limits"); !reflect.DeepEqual(got, any(c.want)) {
					t.Fatalf("MCP data.limits %v, want %v (%s)", got, c.want, r.body)
				}
				for _, bad := range validate(tools["whoami"]["outputSchema"], jsonValue(sc), "structuredContent") {
					t.Error(bad)
				}
			}
		})
	}
}
