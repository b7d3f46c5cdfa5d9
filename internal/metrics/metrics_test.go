package metrics_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/productdata/pds/internal/metrics"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestExposition(t *testing.T) {
	m := metrics.New(func() []metrics.TenantUsage {
		return []metrics.TenantUsage{{Tenant: "acme", Used: 7, Limit: 100}}
	})
	r := m.Route("/v1/products/:identifier")
	r.Observe("GET", 200, time.Millisecond)
	r.Observe("GET", 200, time.Millisecond)
	r.Observe("BREW", 405, time.Millisecond)
	m.Refused("acme", "RATE_LIMITED")
	m.ToolCall("get_product", "ok")
	m.Snapshot("01JBUILD", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), 1)
	m.Snapshot("01JNEXT", time.Date(2026, 1, 3, 3, 4, 5, 0, time.UTC), 1)
	m.Swapped()
	m.SwapRefused("verify_failed")
	m.KeysReloaded(true)
	m.Shed("requests")

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`pds_http_requests_total{code="200",method="GET",route="/v1/products/:identifier"} 2`,
		`pds_http_requests_total{code="405",method="other",route="/v1/products/:identifier"} 1`,
		`pds_http_request_duration_seconds_count{route="/v1/products/:identifier"} 3`,
		`pds_http_requests_in_flight 0`,
		`pds_tenant_refusals_total{code="RATE_LIMITED",tenant="acme"} 1`,
		`pds_tenant_quota_used{tenant="acme"} 7`,
		`pds_tenant_quota_limit{tenant="acme"} 100`,
		`pds_mcp_tool_calls_total{outcome="ok",tool="get_product"} 1`,
		`pds_snapshot_info{build_id="01JNEXT",created_at="2026-01-03T03:04:05Z",format_version="1"} 1`,
		`pds_snapshot_created_timestamp_seconds 1.767409445e+09`,
		`pds_snapshot_swaps_total 1`,
		`pds_snapshot_swap_refusals_total{reason="verify_failed"} 1`,
		`pds_keys_reloads_total{result="ok"} 1`,
		`pds_http_shed_total{limit="requests"} 1`,
		`go_goroutines `,
		`process_open_fds `,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
	if strings.Contains(string(body), "01JBUILD") {
		t.Errorf("the previous snapshot is still reported")
	}
	if n, err := testutil.GatherAndLint(m.Registry()); err != nil || len(n) > 0 {
		t.Errorf("lint: %v %v", n, err)
	}
}

// The tenant label takes at most MaxTenants names; the rest are "other".
func TestTenantsBounded(t *testing.T) {
	m := metrics.New(nil)
	for i := 0; i < metrics.MaxTenants+50; i++ {
		m.Refused(fmt.Sprintf("t%d", i), "RATE_LIMITED")
	}
	if n := testutil.CollectAndCount(m.Registry(), "pds_tenant_refusals_total"); n != metrics.MaxTenants+1 {
		t.Fatalf("%d series, want %d", n, metrics.MaxTenants+1)
	}
	if got := m.Tenant("t3"); got != "t3" {
		t.Errorf("a known tenant became %q", got)
	}
	if got := m.Tenant("new"); got != metrics.OtherTenant {
		t.Errorf("a tenant past the bound is %q", got)
	}
}

// Observing a request on a known route and status allocates nothing.
func TestObserveAllocs(t *testing.T) {
	m := metrics.New(nil)
	r := m.Route("/v1/whoami")
	r.Observe("GET", 200, time.Millisecond)
	if n := testing.AllocsPerRun(100, func() { r.Observe("GET", 200, time.Millisecond) }); n != 0 {
		t.Fatalf("%v allocations per request", n)
	}
}

// The trust metrics appear only once a server reports a root of trust,
// and pds_trust_stale follows the clock against the expiry reported.
func TestTrustMetrics(t *testing.T) {
	m := metrics.New(nil)
	scrape := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	if body := scrape(); strings.Contains(body, "pds_trust_") {
		t.Fatalf("trust metrics without a root of trust:\n%s", body)
	}
	m.Trust(time.Date(2100, 1, 2, 3, 4, 5, 0, time.UTC), 7, 2)
	body := scrape()
	for _, want := range []string{"pds_trust_timestamp_expires_timestamp_seconds 4.102542245e+09", "pds_trust_timestamp_version 7", "pds_trust_root_version 2", "pds_trust_stale 0"} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %q in:\n%s", want, body)
		}
	}
	m.Trust(time.Now().Add(-time.Second), 8, 2)
	if body := scrape(); !strings.Contains(body, "pds_trust_stale 1") || !strings.Contains(body, "pds_trust_timestamp_version 8") {
		t.Errorf("an expired timestamp:\n%s", body)
	}
	m.Trust(time.Time{}, 0, 2)
	if body := scrape(); !strings.Contains(body, "pds_trust_stale 1") || !strings.Contains(body, "pds_trust_timestamp_expires_timestamp_seconds 0") {
		t.Errorf("no timestamp kept:\n%s", body)
	}
}
