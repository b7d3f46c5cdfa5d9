package http_test

import (
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
	"github.com/productdata/pds/service/quota"
	"github.com/productdata/pds/snapshots"
)

// Quotas and rate limits over loopback: headers, refusals, billing units.
func TestQuotaAndRate(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	dir := t.TempDir()
	keysPath := filepath.Join(dir, "keys.json")
	add := func(n keys.New) string {
		s, _, err := keys.Add(keysPath, n, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	metered := add(keys.New{Tenant: "metered", Scopes: keys.AllScopes, Quota: 5, QuotaPeriod: "day"})
	rated := add(keys.New{Tenant: "rated", Scopes: keys.AllScopes, Rate: 0.001, Burst: 2})
	ks, _ := keys.Load(keysPath)
	meter, err := quota.Open(filepath.Join(dir, "usage"), nil)
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
	e := &env{url: srv.URL, keys: map[string]string{"metered": metered, "rated": rated}}

	steps := []struct {
		name, method, path, key, body string
		status                        int
		code, remaining               string
	}{
		{"whoami is free", "GET", "/v1/whoami", "metered", "", 200, "", "5"},
		{"one unit", "GET", "/v1/products/" + demo, "metered", "", 200, "", "4"},
		{"resolve bills per identifier", "POST", "/v1/products/resolve", "metered", resolveBody(demo, demo, demo), 200, "", "1"},
		{"over the quota: refused whole", "POST", "/v1/products/resolve", "metered", resolveBody(demo, demo), 429, "TENANT_QUOTA_EXCEEDED", "1"},
		{"the last unit", "POST", "/v1/identifiers/validate", "metered", `{"value":"1"}`, 200, "", "0"},
		{"nothing left", "GET", "/v1/products/" + demo + "/dpp", "metered", "", 429, "TENANT_QUOTA_EXCEEDED", "0"},
		{"whoami still answers", "GET", "/v1/whoami", "metered", "", 200, "", "0"},
		{"rate: first", "GET", "/v1/products/" + demo, "rated", "", 200, "", "1"},
		{"rate: burst", "GET", "/v1/products/" + demo, "rated", "", 200, "", "0"},
		{"rate: limited", "GET", "/v1/products/" + demo, "rated", "", 429, "RATE_LIMITED", "0"},
	}
	for _, st := range steps {
		r := e.do(t, st.method, st.path, st.key, st.body)
		checkEnvelope(t, r)
		if r.status != st.status || (st.code != "" && r.json["code"] != st.code) {
			t.Fatalf("%s: %d %v, want %d %s", st.name, r.status, r.json["code"], st.status, st.code)
		}
		if got := r.header.Get("RateLimit-Remaining"); got != st.remaining {
			t.Errorf("%s: RateLimit-Remaining %q, want %q", st.name, got, st.remaining)
		}
		if r.header.Get("RateLimit-Limit") == "" || r.header.Get("RateLimit-Reset") == "" {
			t.Errorf("%s: RateLimit headers missing", st.name)
		}
		if r.status == 429 {
			if r.header.Get("Retry-After") == "" {
				t.Errorf("%s: 429 without Retry-After", st.name)
			}
			if want := st.code == "RATE_LIMITED"; r.json["retryable"] != want {
				t.Errorf("%s: retryable %v", st.name, r.json["retryable"])
			}
		}
	}
}
