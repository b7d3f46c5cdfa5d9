package quota

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/service/keys"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func caller(tenant string, k keys.Key) domain.Caller {
	return domain.Caller{Tenant: tenant, KeyID: k.ID, Quota: k.Quota, QuotaPeriod: k.QuotaPeriod, Rate: k.Rate, Burst: k.Burst}
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
		c     domain.Caller
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

// TestRateBoundUnderConcurrency holds a 5/s, burst 5 key to its bound while
// 256 goroutines call at once: never more than burst + rate × elapsed calls
// allowed, whatever the scheduling.
func TestRateBoundUnderConcurrency(t *testing.T) {
	const goroutines, r, b = 256, 5.0, 5
	key := keys.Key{ID: "k", Rate: r, Burst: b}
	run := func(m *Meter, calls func(i int) bool) int64 {
		var allowed atomic.Int64
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := caller("t", key)
				for i := 0; calls(i); i++ {
					if err := m.Charge(context.Background(), c, "op", 1); err == nil {
						allowed.Add(1)
					} else if code(err) != domain.CodeRateLimited {
						t.Errorf("unexpected %v", err)
						return
					}
				}
			}()
		}
		wg.Wait()
		return allowed.Load()
	}

	t.Run("real clock", func(t *testing.T) {
		m, _ := Open(filepath.Join(t.TempDir(), "usage"), nil)
		start := time.Now()
		allowed := run(m, func(int) bool { return time.Since(start) < 300*time.Millisecond })
		elapsed := time.Since(start)
		limit := int64(b + r*elapsed.Seconds())
		if allowed > limit || allowed < b {
			t.Fatalf("%d calls allowed in %s; the bound is %d (and the burst %d must pass)", allowed, elapsed, limit, b)
		}
	})

	t.Run("clock read out of order", func(t *testing.T) {
		// Each reading is a millisecond later than the one before, minus up to
		// 200 ms of jitter: callers that read the clock, then waited for the
		// lock. Time spans at most the number of readings in milliseconds.
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var n atomic.Int64
		var mu sync.Mutex
		rnd := rand.New(rand.NewPCG(1, 2))
		var latest time.Time
		now := func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			t := base.Add(time.Duration(n.Add(1))*time.Millisecond - time.Duration(rnd.IntN(200))*time.Millisecond)
			if t.After(latest) {
				latest = t
			}
			return t
		}
		m, _ := Open(filepath.Join(t.TempDir(), "usage"), now)
		allowed := run(m, func(i int) bool { return i < 40 })
		span := latest.Sub(base)
		limit := int64(b + r*span.Seconds())
		if allowed > limit || allowed < b {
			t.Fatalf("%d calls allowed over %s of clock; the bound is %d", allowed, span, limit)
		}
	})
}

// TestRateHeaders checks what Limits reports for a rate-limited key as
// tokens are spent and come back, and that Retry-After is the wait for the
// next token.
func TestRateHeaders(t *testing.T) {
	clk := &clock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m, _ := Open(filepath.Join(t.TempDir(), "usage"), clk.now)
	c := caller("t", keys.Key{ID: "k", Rate: 0.5, Burst: 2})
	ctx := context.Background()
	steps := []struct {
		name            string
		advance         time.Duration
		want            string
		remaining, rset int64
		retryAfter      int
	}{
		{"fresh: full", 0, "", 1, 2, 0},
		{"second", 0, "", 0, 4, 0},
		{"empty: refused, told to wait 2 s", 0, domain.CodeRateLimited, 0, 4, 2},
		{"one second later: still refused, 1 s to go", time.Second, domain.CodeRateLimited, 0, 3, 1},
		{"a token back", time.Second, "", 0, 4, 0},
		{"clock went back: no refill", -10 * time.Second, domain.CodeRateLimited, 0, 4, 2},
		{"long after: full again", time.Hour, "", 1, 2, 0},
	}
	for _, s := range steps {
		clk.t = clk.t.Add(s.advance)
		err := m.Charge(ctx, c, "op", 1)
		if code(err) != s.want {
			t.Fatalf("%s: %v, want %q", s.name, err, s.want)
		}
		var de *domain.Error
		if errors.As(err, &de) && de.RetryAfter != s.retryAfter {
			t.Errorf("%s: Retry-After %d, want %d", s.name, de.RetryAfter, s.retryAfter)
		}
		lim, ok := m.Limits(c)
		if !ok || lim.Limit != 2 || lim.Remaining != s.remaining || lim.Reset != s.rset {
			t.Errorf("%s: limits %+v, want remaining %d reset %d", s.name, lim, s.remaining, s.rset)
		}
	}
}

// Buckets of callers that come and go (the resolver's client addresses)
// are dropped once refilled, so the map does not grow without bound, and
// the limits still hold: a bucket still spending is kept.
func TestRefilledBucketsAreDropped(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	m, err := Open(filepath.Join(t.TempDir(), "usage"), clk.now)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	addr := func(i int) domain.Caller {
		return caller("", keys.Key{ID: "addr:" + strconv.Itoa(i), Rate: 0.5, Burst: 1})
	}
	for i := 0; i < minPruneAt; i++ {
		if err := m.Charge(ctx, addr(i), "resolver", 1); err != nil {
			t.Fatal(err)
		}
	}
	clk.t = clk.t.Add(3 * time.Second) // every bucket refills
	busy := addr(-1)
	if err := m.Charge(ctx, busy, "resolver", 1); err != nil { // the map is full: a prune, then busy's bucket
		t.Fatal(err)
	}
	m.mu.Lock()
	n := len(m.buckets)
	m.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d buckets after the prune, want 1", n)
	}
	if err := m.Charge(ctx, busy, "resolver", 1); code(err) != domain.CodeRateLimited {
		t.Fatalf("busy's spent bucket was dropped: %v", err)
	}
}
