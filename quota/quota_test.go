package quota

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/keys"
	"github.com/productdata/pds/service"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func caller(tenant string, k keys.Key) service.Caller {
	k.Tenant = tenant
	return service.Caller{Tenant: tenant, KeyID: k.ID, Key: &k}
}

func code(err error) string {
	var de *domain.Error
	if errors.As(err, &de) {
		return de.Code
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return ""
}

func TestQuota(t *testing.T) {
	clk := &clock{time.Date(2026, 11, 22, 23, 59, 0, 0, time.UTC)}
	path := filepath.Join(t.TempDir(), "usage")
	m, err := Open(path, clk.now)
	if err != nil {
		t.Fatal(err)
	}
	daily := caller("acme", keys.Key{ID: "k1", Quota: 5, QuotaPeriod: "day"})
	other := caller("other", keys.Key{ID: "k2", Quota: 5, QuotaPeriod: "day"})
	ctx := context.Background()
	steps := []struct {
		name  string
		c     service.Caller
		units int
		want  string
		left  int64
	}{
		{"first", daily, 3, "", 2},
		{"would pass the quota: refused whole", daily, 3, domain.CodeTenantQuotaExceeded, 2},
		{"fits exactly", daily, 2, "", 0},
		{"nothing left", daily, 1, domain.CodeTenantQuotaExceeded, 0},
		{"zero units are free", daily, 0, "", 0},
		{"another tenant has its own", other, 5, "", 0},
	}
	for _, s := range steps {
		err := m.Charge(ctx, s.c, "op", s.units)
		if code(err) != s.want {
			t.Fatalf("%s: %v, want %q", s.name, err, s.want)
		}
		if lim, _ := m.Limits(s.c); lim.Remaining != s.left || lim.Limit != 5 {
			t.Fatalf("%s: limits %+v, want remaining %d", s.name, lim, s.left)
		}
	}
	var de *domain.Error
	errors.As(m.Charge(ctx, daily, "op", 1), &de)
	if de.RetryAfter != 60 {
		t.Errorf("Retry-After %d, want 60 (the day ends in a minute)", de.RetryAfter)
	}
	// Usage survives a restart.
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	m2, err := Open(path, clk.now)
	if err != nil {
		t.Fatal(err)
	}
	if err := m2.Charge(ctx, daily, "op", 1); code(err) != domain.CodeTenantQuotaExceeded {
		t.Fatalf("after restart: %v", err)
	}
	// A new day renews it.
	clk.t = clk.t.Add(2 * time.Minute)
	if err := m2.Charge(ctx, daily, "op", 5); err != nil {
		t.Fatalf("next day: %v", err)
	}
	monthly := caller("m", keys.Key{ID: "k3", Quota: 1, QuotaPeriod: "month"})
	if err := m2.Charge(ctx, monthly, "op", 1); err != nil {
		t.Fatal(err)
	}
	clk.t = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if err := m2.Charge(ctx, monthly, "op", 1); code(err) != domain.CodeTenantQuotaExceeded {
		t.Fatalf("same month: %v", err)
	}
	clk.t = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if err := m2.Charge(ctx, monthly, "op", 1); err != nil {
		t.Fatalf("next month: %v", err)
	}
}

func TestRate(t *testing.T) {
	clk := &clock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m, _ := Open(filepath.Join(t.TempDir(), "usage"), clk.now)
	c := caller("t", keys.Key{ID: "k", Rate: 2, Burst: 3})
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if err := m.Charge(ctx, c, "op", 1); err != nil {
			t.Fatalf("burst call %d: %v", i, err)
		}
	}
	err := m.Charge(ctx, c, "op", 1)
	var de *domain.Error
	if !errors.As(err, &de) || de.Code != domain.CodeRateLimited || de.RetryAfter != 1 {
		t.Fatalf("past the burst: %v", err)
	}
	clk.t = clk.t.Add(500 * time.Millisecond) // one token back at 2/s
	if err := m.Charge(ctx, c, "op", 1); err != nil {
		t.Fatalf("after refill: %v", err)
	}
	if lim, ok := m.Limits(c); !ok || lim.Limit != 3 || lim.Remaining != 0 {
		t.Fatalf("limits %+v", lim)
	}
	// A rate-limited call bills nothing.
	q := caller("q", keys.Key{ID: "kq", Rate: 1, Burst: 1, Quota: 10, QuotaPeriod: "day"})
	m.Charge(ctx, q, "op", 4)
	if err := m.Charge(ctx, q, "op", 4); code(err) != domain.CodeRateLimited {
		t.Fatalf("want rate limited: %v", err)
	}
	if lim, _ := m.Limits(q); lim.Remaining != 6 {
		t.Fatalf("a refused call was billed: %+v", lim)
	}
	// Unlimited keys are never refused and report nothing.
	free := caller("f", keys.Key{ID: "kf"})
	for i := 0; i < 100; i++ {
		if err := m.Charge(ctx, free, "op", 1000); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := m.Limits(free); ok {
		t.Error("limits reported for an unlimited key")
	}
}
